package dev.laneway.engine.testing;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.DeviceFault;
import dev.laneway.spi.device.DeviceProvider;
import dev.laneway.spi.device.Devices;

import java.time.Duration;
import java.util.Optional;

/**
 * A test device provider: {@code unplugged} names a device that exists but never gives a context, like an
 * accelerator whose driver is not loaded.
 */
public final class UnpluggedDevices implements DeviceProvider {
    public static final String NAME = "unplugged";
    public static final String WHY = "the driver is not loaded";

    @Override
    public Optional<Device> open(String spec, Devices devices) {
        if (!spec.equals(NAME)) {
            return Optional.empty();
        }
        return Optional.of(new Device() {
            @Override
            public String name() {
                return NAME;
            }

            @Override
            public String kind() {
                return "npu";
            }

            @Override
            public int maxContexts() {
                return 1;
            }

            @Override
            public DeviceContext open(Duration timeout) {
                throw new DeviceFault(NAME, DeviceFault.Kind.UNAVAILABLE, WHY);
            }
        });
    }

    @Override
    public String describe() {
        return NAME + " (tests)";
    }
}
