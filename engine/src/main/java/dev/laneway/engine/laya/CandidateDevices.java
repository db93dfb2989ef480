package dev.laneway.engine.laya;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.Devices;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Opens the devices a routed model may run on. The route's own device ({@code --device}) comes first, then every
 * other device the policy names, in the policy's order. Each is opened and probed with one context; a device that
 * fails either is dropped from the candidates with a log line saying why.
 */
public final class CandidateDevices {
    private CandidateDevices() {
    }

    /** The device names to try: the route's device, then the policy's others, each once. */
    public static List<String> wanted(String routeDevice, RoutePolicy policy) {
        List<String> names = new ArrayList<>();
        names.add(routeDevice);
        policy.devices().stream().filter(d -> !names.contains(d)).forEach(names::add);
        return names;
    }

    /**
     * Opens and probes each named device.
     *
     * @param probe how long a probe waits for a context
     * @param log   receives a line per dropped device
     * @return the devices that opened, by name, in the order asked
     * @throws LayaException when none did
     */
    public static Map<String, Device> open(List<String> names, Devices devices, Duration probe, Consumer<String> log)
            throws LayaException {
        Map<String, Device> opened = new LinkedHashMap<>();
        List<String> why = new ArrayList<>();
        for (String name : names) {
            try {
                Device device = devices.open(name);
                try (DeviceContext context = device.open(probe)) {
                    context.id();
                }
                opened.put(name, device);
            } catch (RuntimeException e) {
                String line = "laya: device " + name + " dropped from the candidates: " + e.getMessage();
                log.accept(line);
                why.add(name + " (" + e.getMessage() + ")");
            }
        }
        if (opened.isEmpty()) {
            throw new LayaException("laya: no candidate device opened: " + String.join("; ", why));
        }
        return opened;
    }
}
