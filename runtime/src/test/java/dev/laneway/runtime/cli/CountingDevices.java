package dev.laneway.runtime.cli;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.DeviceProvider;
import dev.laneway.spi.device.Devices;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The device {@code --device counting}: the host CPU, counting how often it is opened (made from its name) and how
 * many contexts it gives, so tests can tell that a refused option never reached a device.
 */
public final class CountingDevices implements DeviceProvider {
    /** The device's name. */
    public static final String NAME = "counting";
    /** Devices made from the name. */
    public static final AtomicInteger OPENED = new AtomicInteger();
    /** Contexts opened on them. */
    public static final AtomicInteger CONTEXTS = new AtomicInteger();

    @Override
    public Optional<Device> open(String spec, Devices devices) {
        if (!spec.equals(NAME)) {
            return Optional.empty();
        }
        OPENED.incrementAndGet();
        Device host = devices.open("cpu");
        return Optional.of(new Device() {
            @Override
            public String name() {
                return NAME;
            }

            @Override
            public String kind() {
                return host.kind();
            }

            @Override
            public int maxContexts() {
                return host.maxContexts();
            }

            @Override
            public DeviceContext open(Duration timeout) {
                CONTEXTS.incrementAndGet();
                return host.open(timeout);
            }
        });
    }

    @Override
    public String describe() {
        return NAME;
    }

    /** Forgets what was counted. */
    public static void reset() {
        OPENED.set(0);
        CONTEXTS.set(0);
    }
}
