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

    /**
     * With three retries per step: one timeout at position 5 (absorbed), and four in a row at position 10 and at
     * position 40 (each a step that fails its whole budget).
     */
    public static class Pinpointed extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = on("chaos:cpu?fail_at=5:2,10:1,10:2,10:3,10:4,40:1,40:2,40:3,40:4");
            config.put("laneway.faults.retries", "3");
            config.put("laneway.faults.probe-seconds", "3");
            return config;
        }
    }

    /** One kernel run in 500 times out. */
    public static class Random extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return on("chaos:cpu?p=0.002&seed=1");
        }
    }

    /** One kernel run in 20 times out: a device that keeps failing. */
    public static class Heavy extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return on("chaos:cpu?p=0.05&seed=3");
        }
    }
}
