package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;
import java.util.Set;

/** The server with a {@link ScriptedModel}: one stream, one request may wait; the metrics at /metrics too. */
public class ScriptedProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("laneway.model", "scripted", "laneway.streams", "1", "laneway.queue.max", "1",
                "laneway.metrics-endpoint", "true");
    }

    @Override
    public Set<Class<?>> getEnabledAlternatives() {
        return Set.of(ScriptedOpener.class);
    }

    /** The same server, but the model stays loading until the test lets it. */
    public static class Loading extends ScriptedProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("laneway.model", "scripted", "scripted.hold-loading", "true");
        }
    }

    /** The same server with a model that routes requests, as one served with {@code --laya} does. */
    public static class Routed extends ScriptedProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("laneway.model", "scripted", "laneway.streams", "1", "laneway.queue.max", "1",
                    "scripted.routed", "true");
        }
    }

    /** The same server with an API key and {@code --metrics-open}: the metrics answer without the key. */
    public static class OpenMetrics extends ScriptedProfile {
        static final String KEY = "sk-scripted-key";

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("laneway.model", "scripted", "laneway.api-key", KEY, "laneway.metrics-endpoint", "true",
                    "laneway.metrics-open", "true");
        }
    }

    /** The same server, started afresh for tests that read its whole state. */
    public static class Fresh extends ScriptedProfile {
    }
}
