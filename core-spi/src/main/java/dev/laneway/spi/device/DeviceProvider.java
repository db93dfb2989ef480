package dev.laneway.spi.device;

import java.util.Optional;

/**
 * Opens devices by name. Found with {@link java.util.ServiceLoader}; the first provider that knows a name opens it.
 */
public interface DeviceProvider {

    /**
     * The device a {@code --device} value names, if this provider knows it.
     *
     * @param spec    the value, e.g. {@code cpu} or {@code chaos:cpu?p=0.05&seed=1}
     * @param devices to open devices this one wraps
     * @throws IllegalArgumentException when the name is this provider's but malformed; the message says why
     */
    Optional<Device> open(String spec, Devices devices);

    /** The names this provider knows, for messages. */
    String describe();
}
