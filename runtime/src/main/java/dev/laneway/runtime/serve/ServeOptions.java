package dev.laneway.runtime.serve;

import dev.laneway.spi.RouteOptions;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The route options the configuration describes. */
final class ServeOptions {
    private ServeOptions() {
    }

    static RouteOptions from(LanewayConfig config) {
        Map<String, String> opt = new LinkedHashMap<>();
        for (String pair : config.opt().orElse(List.of())) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("laneway.opt " + pair + ": expected KEY=VALUE");
            }
            String key = pair.substring(0, eq).trim();
            opt.remove(key);
            opt.put(key, pair.substring(eq + 1));
        }
        return new RouteOptions(config.alias().map(names -> names.get(0)), config.streams(), opt, config.laya().map(Path::of), config.device());
    }
}
