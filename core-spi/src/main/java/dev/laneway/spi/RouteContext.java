package dev.laneway.spi;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the runtime offers a route that opens a model.
 *
 * @param cacheDir a directory the route may use for derived files that outlive the process
 * @param settings runtime settings a route may honour, by property name (see {@link #WATCHDOG_SECONDS},
 *                 {@link #DEVICE_LOCK})
 */
public record RouteContext(Path cacheDir, Map<String, String> settings) {
    /** Seconds a generation may go without progress before it is failed and its context dropped. */
    public static final String WATCHDOG_SECONDS = "laneway.watchdog.seconds";
    /** The lock file through which processes share a device that allows one context at a time. */
    public static final String DEVICE_LOCK = "laneway.device-lock";

    public RouteContext {
        Objects.requireNonNull(cacheDir, "cacheDir");
        settings = Map.copyOf(settings);
    }

    public RouteContext(Path cacheDir) {
        this(cacheDir, Map.of());
    }

    /** A setting, if given. */
    public Optional<String> setting(String name) {
        return Optional.ofNullable(settings.get(name));
    }
}
