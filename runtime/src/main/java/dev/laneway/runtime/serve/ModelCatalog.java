package dev.laneway.runtime.serve;

import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.spi.RouteOptions;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The models a server serves, in order: each {@code laneway.model} (the first is loaded at startup and answers
 * requests that name no model), then each model in {@code laneway.models-dir}, then the preset's own models; the
 * preset's sections also set how the others are served. Every model gets the command line's route options unless its
 * preset section says otherwise.
 */
final class ModelCatalog {
    private static final Logger LOG = Logger.getLogger(ModelCatalog.class);

    private ModelCatalog() {
    }

    /** One model's settings while the catalog is read. */
    private static final class Draft {
        final List<String> names = new ArrayList<>();
        Path path;
        final Map<String, String> opt = new LinkedHashMap<>();
        int streams;
        Optional<Path> laya;
        String device;
        Optional<Duration> keepAlive = Optional.empty();
        boolean pinned;
        boolean loadOnStartup;
        List<String> tags = List.of();

        Draft(String name, Path path, RouteOptions base) {
            names.add(name);
            this.path = path;
            opt.putAll(base.opt());
            streams = base.streams();
            laya = base.laya();
            device = base.device();
        }

        ModelSpec spec() {
            return new ModelSpec(names, path, new RouteOptions(Optional.of(names.get(0)), streams, opt, laya, device),
                    keepAlive, pinned, loadOnStartup, tags);
        }
    }

    /**
     * @throws IllegalArgumentException naming what is wrong: a path that is no model, a preset that cannot be read or
     *                                  holds what is not known, two models of one name, or no model at all
     */
    static List<ModelSpec> read(LanewayConfig config) {
        RouteOptions base = ServeOptions.from(config);
        List<Draft> drafts = new ArrayList<>();
        List<String> paths = config.model().orElse(List.of());
        for (int i = 0; i < paths.size(); i++) {
            Draft d = new Draft(ModelSpec.defaultName(Path.of(paths.get(i))), Path.of(paths.get(i)), base);
            if (i == 0) {
                config.alias().ifPresent(names -> {
                    d.names.clear();
                    d.names.addAll(names);
                });
                d.tags = config.tags().orElse(List.of());
                d.loadOnStartup = true;
            }
            drafts.add(d);
        }
        config.modelsDir().ifPresent(dir -> drafts.addAll(inDirectory(Path.of(dir), base)));
        config.modelsPreset().ifPresent(file -> preset(Path.of(file), base, drafts));
        if (drafts.isEmpty()) {
            throw new IllegalArgumentException("no model to serve: pass -m MODEL, --models-dir DIR or"
                    + " --models-preset FILE");
        }
        Map<String, Path> named = new HashMap<>();
        List<ModelSpec> specs = new ArrayList<>();
        for (Draft d : drafts) {
            for (String name : d.names) {
                Path other = named.putIfAbsent(name, d.path);
                if (other != null) {
                    throw new IllegalArgumentException("two models are named " + name + ": " + other + " and "
                            + d.path + "; give one another name (--alias, or a preset section)");
                }
            }
            specs.add(d.spec());
        }
        return specs;
    }

    /** Every model in {@code dir}, by name; what is no model is logged and left out. */
    private static List<Draft> inDirectory(Path dir, RouteOptions base) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--models-dir " + dir + " is not a directory");
        }
        List<Path> entries;
        try (Stream<Path> list = Files.list(dir)) {
            entries = list.filter(p -> !p.getFileName().toString().startsWith(".")).sorted().toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot list --models-dir " + dir + ": " + e.getMessage());
        }
        List<Draft> drafts = new ArrayList<>();
        for (Path entry : entries) {
            try {
                ModelLocator.locate(entry);
                drafts.add(new Draft(ModelSpec.defaultName(entry), entry, base));
            } catch (IllegalArgumentException e) {
                LOG.infof("--models-dir: %s is not a model, left out (%s)", entry.getFileName(), e.getMessage());
            }
        }
        if (drafts.isEmpty()) {
            throw new IllegalArgumentException("--models-dir " + dir + " holds no model (a container directory, a"
                    + " .gguf file or a Hugging Face checkpoint directory)");
        }
        return drafts;
    }

    /** Sets the preset's sections on the models they name, and adds the models only the preset names. */
    private static void preset(Path file, RouteOptions base, List<Draft> drafts) {
        Map<String, ModelPreset.Section> sections = ModelPreset.read(file);
        ModelPreset.Section all = sections.remove("*");
        for (ModelPreset.Section section : sections.values()) {
            Draft d = drafts.stream().filter(m -> m.names.get(0).equals(section.name())).findFirst().orElse(null);
            if (d == null) {
                if (section.one("model").isEmpty()) {
                    throw new IllegalArgumentException(file.getFileName() + ": [" + section.name() + "] names no"
                            + " served model, so it needs model = PATH");
                }
                Path where = file.toAbsolutePath().getParent().resolve(section.one("model").get());
                ModelLocator.locate(where);
                d = new Draft(section.name(), where, base);
                drafts.add(d);
            } else if (section.one("model").isPresent()) {
                throw new IllegalArgumentException(file.getFileName() + ": [" + section.name() + "] is already served"
                        + " from " + d.path + "; its section cannot move it to " + section.one("model").get());
            }
            if (all != null) {
                apply(file, all, d);
            }
            apply(file, section, d);
        }
        if (all != null && all.one("model").isPresent()) {
            throw new IllegalArgumentException(file.getFileName() + ": [*] cannot give a model path");
        }
        if (all != null) {
            drafts.stream().filter(d -> !sections.containsKey(d.names.get(0))).forEach(d -> apply(file, all, d));
        }
    }

    private static void apply(Path file, ModelPreset.Section s, Draft d) {
        String where = file.getFileName() + " [" + s.name() + "] ";
        for (String names : s.all("alias")) {
            for (String name : names.split(",")) {
                if (!name.isBlank() && !d.names.contains(name.strip())) {
                    d.names.add(name.strip());
                }
            }
        }
        for (String pair : s.all("opt")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(where + "opt " + pair + ": expected KEY=VALUE");
            }
            d.opt.remove(pair.substring(0, eq).strip());
            d.opt.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        s.one("streams").ifPresent(v -> {
            d.streams = integer(where + "streams", v);
            if (d.streams < 1) {
                throw new IllegalArgumentException(where + "streams must be at least 1, was " + v);
            }
        });
        s.one("laya").ifPresent(v -> d.laya = Optional.of(file.toAbsolutePath().getParent().resolve(v)));
        s.one("device").ifPresent(v -> d.device = v);
        s.one("keep-alive").ifPresent(v -> d.keepAlive = Optional.of(KeepAlive.parse(v).orElseThrow(() ->
                new IllegalArgumentException(where + "keep-alive must be seconds or a duration such as 5m, was "
                        + v))));
        s.one("pinned").ifPresent(v -> d.pinned = bool(where + "pinned", v));
        s.one("load-on-startup").ifPresent(v -> d.loadOnStartup = bool(where + "load-on-startup", v));
        if (!s.all("tags").isEmpty()) {
            d.tags = s.all("tags").stream().flatMap(t -> Stream.of(t.split(","))).map(String::strip)
                    .filter(t -> !t.isEmpty()).toList();
        }
    }

    private static int integer(String what, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be a whole number, was " + value);
        }
    }

    private static boolean bool(String what, String value) {
        return switch (value.toLowerCase(java.util.Locale.ROOT)) {
            case "true", "on", "1", "yes" -> true;
            case "false", "off", "0", "no" -> false;
            default -> throw new IllegalArgumentException(what + " must be true or false, was " + value);
        };
    }
}
