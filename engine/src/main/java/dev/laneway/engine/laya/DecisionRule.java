package dev.laneway.engine.laya;

import java.util.List;

/**
 * Which candidate device a classified request runs on: the class's device when the classification is at least
 * {@code min_confidence} sure and that device is a candidate; else the policy's default when it is a candidate; else
 * the first candidate.
 */
public final class DecisionRule {
    private DecisionRule() {
    }

    /**
     * @param candidates the devices the model runs on, the route's own device first; never empty
     */
    public static String device(Classification c, RoutePolicy policy, List<String> candidates) {
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidate devices");
        }
        if (c.confidence() >= policy.minConfidence()) {
            String classDevice = policy.deviceFor(c.requestClass()).orElse(null);
            if (classDevice != null && candidates.contains(classDevice)) {
                return classDevice;
            }
        }
        return candidates.contains(policy.defaultDevice()) ? policy.defaultDevice() : candidates.get(0);
    }
}
