package dev.laneway.runtime.api;

import java.util.Map;

/** The real stories260K server on the fault-injecting device ({@code --device chaos:cpu?...}), two streams. */
final class ChaosProfiles {
    private ChaosProfiles() {
    }

    private static Map<String, String> on(String device) {
        Map<String, String> config = new StoriesProfile().getConfigOverrides();
        config.put("laneway.device", device);
        config.put("laneway.streams", "2");
        config.put("laneway.queue.max", "16");
        return config;
    }

    /** Timeouts at layer 3 of position 10 and at layer 1 of position 40, once each. */
    public static class Pinpointed extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return on("chaos:cpu?fail_at=5:2,10:3,10:4,40:1,40:2");
        }
    }

    /** A run times out with probability 5e-5: about one generation in twenty of 16 tokens. */
    public static class Random extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return on("chaos:cpu?p=0.001&seed=1");
        }
    }
}
