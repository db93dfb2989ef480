package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;
import java.util.Set;

/** The server with a {@link ScriptedModel}: one stream, one request may wait. */
public class ScriptedProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("laneway.model", "scripted", "laneway.streams", "1", "laneway.queue.max", "1");
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
}
