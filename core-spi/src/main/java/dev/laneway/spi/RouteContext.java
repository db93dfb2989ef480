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
 *                 {@link #DEVICE_LOCK}, {@link #FAULT_RETRIES}, {@link #FAULT_RETRY_SECONDS},
 *                 {@link #FAULT_PROBE_SECONDS})
 */
public record RouteContext(Path cacheDir, Map<String, String> settings) {
    /** Seconds a generation may go without progress before it is failed and its context dropped. */
    public static final String WATCHDOG_SECONDS = "laneway.watchdog.seconds";
    /** The lock file through which processes share a device that allows one context at a time. */
    public static final String DEVICE_LOCK = "laneway.device-lock";
    /** How many times a step the device fails runs again on a fresh context before its generations fail. */
    public static final String FAULT_RETRIES = "laneway.faults.retries";
    /** How many seconds a step may spend on retries. */
    public static final String FAULT_RETRY_SECONDS = "laneway.faults.retry-seconds";
    /** How many seconds a device taken out of service waits for its first probe. */
    public static final String FAULT_PROBE_SECONDS = "laneway.faults.probe-seconds";

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
