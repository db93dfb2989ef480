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

    /**
     * Several scripted models behind one server: {@code a} (the default, loaded at startup), and in a models
     * directory {@code b} and {@code big}, each served by a file of {@link #MODEL_MIB}, resp. 5 MiB, under a memory
     * budget of 4 MiB: {@code a} and {@code b} never fit together, {@code big} never fits.
     */
    public static class Models extends ScriptedProfile {
        static final int MODEL_MIB = 3;

        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                java.nio.file.Path root = java.nio.file.Files.createTempDirectory("laneway-models");
                java.nio.file.Path dir = java.nio.file.Files.createDirectories(root.resolve("more"));
                java.nio.file.Path a = sized(root.resolve("a.gguf"), MODEL_MIB);
                sized(dir.resolve("b.gguf"), MODEL_MIB);
                sized(dir.resolve("big.gguf"), 5);
                java.nio.file.Files.writeString(dir.resolve("README.txt"), "not a model");
                return Map.of("laneway.model", a.toString(), "laneway.models-dir", dir.toString(),
                        "laneway.memory-budget-mib", "4", "laneway.streams", "1", "laneway.queue.max", "2",
                        "laneway.load-wait-seconds", "20", "laneway.metrics-endpoint", "true");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        private static java.nio.file.Path sized(java.nio.file.Path file, int mib) throws java.io.IOException {
            try (var out = java.nio.file.Files.newOutputStream(file)) {
                out.write(new byte[mib << 20]);
            }
            file.toFile().deleteOnExit();
            return file;
        }
    }

    /** The same server, started afresh for tests that read its whole state. */
    public static class Fresh extends ScriptedProfile {
    }
}
