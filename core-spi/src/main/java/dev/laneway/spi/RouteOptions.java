package dev.laneway.spi;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The serve options the runtime hands to a route.
 *
 * @param alias   the model id clients use, if set ({@code --alias})
 * @param streams how many generations run at once ({@code --streams}, at least 1)
 * @param opt     route-specific {@code --opt KEY=VALUE} pairs, in the order given (a key given twice: the later wins)
 * @param laya    the Laya router checkpoint, if set ({@code --laya})
 * @param device  the device to run on ({@code --device}, {@code cpu} by default)
 */
public record RouteOptions(Optional<String> alias, int streams, Map<String, String> opt, Optional<Path> laya,
                           String device) {

    /** The device every machine has. */
    public static final String HOST_DEVICE = "cpu";

    public RouteOptions {
        Objects.requireNonNull(alias, "alias");
        Objects.requireNonNull(laya, "laya");
        Checks.nonBlank(device, "device");
        if (streams < 1) {
            throw new IllegalArgumentException("streams must be at least 1, was " + streams);
        }
        opt = Collections.unmodifiableMap(new LinkedHashMap<>(opt));
    }

    /** No options: one stream on the host device. */
    public static RouteOptions defaults() {
        return new RouteOptions(Optional.empty(), 1, Map.of(), Optional.empty(), HOST_DEVICE);
    }

    public RouteOptions withAlias(String alias) {
        return new RouteOptions(Optional.of(alias), streams, opt, laya, device);
    }

    public RouteOptions withStreams(int streams) {
        return new RouteOptions(alias, streams, opt, laya, device);
    }

    public RouteOptions withOpt(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(opt);
        more.remove(key);
        more.put(key, value);
        return new RouteOptions(alias, streams, more, laya, device);
    }

    public RouteOptions withLaya(Path laya) {
        return new RouteOptions(alias, streams, opt, Optional.of(laya), device);
    }

    public RouteOptions withDevice(String device) {
        return new RouteOptions(alias, streams, opt, laya, device);
    }

    /** The value of an {@code --opt} key, if given. */
    public Optional<String> opt(String key) {
        return Optional.ofNullable(opt.get(key));
    }

    /** Whether the host device is asked for. */
    public boolean onHost() {
        return HOST_DEVICE.equals(device);
    }
}
