package dev.laneway.engine.lane;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceProvider;
import dev.laneway.spi.device.Devices;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Opens devices by their {@code --device} names: the host ({@code cpu}), the chaos wrapper
 * ({@code chaos:<device>?knobs}), and whatever {@link DeviceProvider}s are on the class path.
 */
public final class DeviceRegistry implements Devices {
    private final List<DeviceProvider> providers;
    private final Clock clock;

    private DeviceRegistry(List<DeviceProvider> providers, Clock clock) {
        this.providers = providers;
        this.clock = clock;
    }

    /** The built-in devices and those of the providers found on the class path. */
    public static DeviceRegistry discover() {
        return withClock(Clock.SYSTEM);
    }

    /** As {@link #discover()}, with chaos devices on the given clock (tests). */
    public static DeviceRegistry withClock(Clock clock) {
        List<DeviceProvider> providers = new ArrayList<>();
        ServiceLoader.load(DeviceProvider.class, DeviceRegistry.class.getClassLoader()).forEach(providers::add);
        return new DeviceRegistry(providers, clock);
    }

    @Override
    public Device open(String spec) {
        if (spec.equals(HostDevice.NAME)) {
            return new HostDevice();
        }
        if (spec.startsWith("chaos:")) {
            String rest = spec.substring("chaos:".length());
            int q = rest.indexOf('?');
            Device inner = open(q < 0 ? rest : rest.substring(0, q));
            return new ChaosDevice(spec, inner, ChaosConfig.parse(q < 0 ? "" : rest.substring(q + 1)), clock);
        }
        for (DeviceProvider p : providers) {
            Optional<Device> d = p.open(spec, this);
            if (d.isPresent()) {
                return d.get();
            }
        }
        StringBuilder known = new StringBuilder("cpu, chaos:<device>?knobs");
        providers.forEach(p -> known.append(", ").append(p.describe()));
        throw new IllegalArgumentException("no device named '" + spec + "' (known: " + known + ")");
    }
}
