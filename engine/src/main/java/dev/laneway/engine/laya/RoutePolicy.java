package dev.laneway.engine.laya;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A checkpoint's {@code route-policy.json}: which device each class of request should run on, how sure the
 * classifier must be for that, and the device for everything else.
 *
 * @param minConfidence a classification below it goes to the default device
 * @param defaultDevice the device of requests no class row takes
 * @param classes       a row per class the policy names; a class without one goes to the default
 */
public record RoutePolicy(double minConfidence, String defaultDevice, Map<RequestClass, ClassRoute> classes) {

    /**
     * One class's row.
     *
     * @param device the device for the class
     * @param why    the operator's reason, shown in the start-up line; may be empty
     */
    public record ClassRoute(String device, String why) {
        public ClassRoute {
            Objects.requireNonNull(device, "device");
            Objects.requireNonNull(why, "why");
        }
    }

    public RoutePolicy {
        Objects.requireNonNull(defaultDevice, "defaultDevice");
        if (!(minConfidence >= 0 && minConfidence <= 1)) {
            throw new IllegalArgumentException("minConfidence must be in [0, 1], was " + minConfidence);
        }
        classes = classes.isEmpty() ? Map.of() : Map.copyOf(new EnumMap<>(classes));
    }

    /** The device the policy names for a class, if it has a row. */
    public Optional<String> deviceFor(RequestClass c) {
        return Optional.ofNullable(classes.get(c)).map(ClassRoute::device);
    }

    /** Every device the policy names, each once: the default first, then the class rows in class order. */
    public List<String> devices() {
        List<String> devices = new ArrayList<>();
        devices.add(defaultDevice);
        for (RequestClass c : RequestClass.values()) {
            deviceFor(c).filter(d -> !devices.contains(d)).ifPresent(devices::add);
        }
        return devices;
    }

    /** One line for the start-up log: {@code min_confidence 0.16, default cpu, code -> npu (why), ...}. */
    public String describe() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "min_confidence %.2f, default %s",
                minConfidence, defaultDevice));
        for (RequestClass c : RequestClass.values()) {
            ClassRoute row = classes.get(c);
            if (row != null) {
                sb.append(", ").append(c.wireName()).append(" -> ").append(row.device());
                if (!row.why().isEmpty()) {
                    sb.append(" (").append(row.why()).append(')');
                }
            }
        }
        return sb.toString();
    }
}
