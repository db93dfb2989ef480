package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The real server on the real stories260K model ({@code ../shared/models/stories260K}), served as
 * {@value #ALIAS} on one stream.
 */
public class StoriesProfile implements QuarkusTestProfile {
    static final String ALIAS = "stories260K";
    static final String API_KEY = "sk-laneway-test-4f1c";

    /** The shared test data directory; its absence fails the tests rather than skipping them. */
    static Path shared() {
        String dir = System.getProperty("shared.dir");
        if (dir == null || !Files.isDirectory(Path.of(dir))) {
            throw new IllegalStateException("the shared test data is missing: set -Dlaneway.shared.dir (was "
                    + dir + ")");
        }
        return Path.of(dir);
    }

    public static Path model() {
        Path gguf = shared().resolve("models/stories260K/stories260K.gguf");
        if (!Files.isRegularFile(gguf)) {
            throw new IllegalStateException("the stories260K model is missing: " + gguf);
        }
        return gguf;
    }

    /** Waits, boundedly, for the model to load behind the already open port. */
    static void awaitReady() throws InterruptedException {
        for (int i = 0; i < 1200; i++) {
            Response health = RestAssured.given().get("/health");
            if (health.statusCode() == 200) {
                return;
            }
            if (!"loading".equals(health.path("status"))) {
                break;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the model did not become ready: " + RestAssured.given().get("/q/health/ready")
                .asString());
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>();
        config.put("laneway.model", model().toString());
        config.put("laneway.alias", ALIAS);
        config.put("laneway.streams", "1");
        config.put("laneway.queue.max", "4");
        // small bounds on clients that stop reading, for the test of one
        config.put("laneway.client.stall-seconds", "2");
        config.put("laneway.client.max-backlog-bytes", "1048576");
        return config;
    }

    /**
     * The same server with {@code --streams 4}: one engine loop batches the running generations; with prompt lookup
     * ({@code --opt lookup=4}), so that every answer of its tests is also one whose drafts were verified.
     */
    public static class FourStreams extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            config.put("laneway.streams", "4");
            config.put("laneway.opt", "lookup=4");
            config.put("laneway.queue.max", "16");
            return config;
        }
    }

    /**
     * The same server set up as llama.cpp's server tests start llama-server: two streams, sampling defaults from the
     * command line ({@code --temp 0.8 --seed 42 --n-predict 64}), any model name answered, {@code __verbose} in
     * whole answers ({@code --verbose}), {@code --context-shift}.
     */
    public static class LlamaServer extends StoriesProfile {
        /** A predict route as Vertex AI names one: with a ':', which no route pattern may read as a parameter. */
        static final String VERTEX_PREDICT = "/v1/endpoints/7/deployedModels/laneway:predict";

        /** The directory of the slot files (--slot-save-path). */
        static final java.nio.file.Path SLOT_DIR;

        static {
            try {
                SLOT_DIR = java.nio.file.Files.createTempDirectory("laneway-slots");
                SLOT_DIR.toFile().deleteOnExit();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            config.put("laneway.streams", "2");
            config.put("laneway.sampling.temperature", "0.8");
            config.put("laneway.sampling.seed", "42");
            config.put("laneway.sampling.n-predict", "64");
            config.put("laneway.accept-any-model", "true");
            config.put("laneway.verbose", "true");
            config.put("laneway.slot-save-path", SLOT_DIR.toString());
            config.put("laneway.embeddings", "true");
            config.put("laneway.context-shift", "true");
            // as laneway serve sets it up under AIP_MODE=PREDICTION with Vertex AI's own routes
            config.put("laneway.vertex.enabled", "true");
            config.put("laneway.vertex.predict-route", VERTEX_PREDICT);
            config.put("laneway.vertex.health-route", "/vertex/health");
            return config;
        }
    }

    /**
     * The same server on two streams with {@code --sleep-idle-seconds 1}, three names ({@code --alias}, the first the
     * id) and {@code --tags}, and llama-server's metrics.
     */
    public static class Sleeping extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            config.put("laneway.streams", "2");
            config.put("laneway.alias", ALIAS + ",tiny,bedtime");
            config.put("laneway.tags", "small,test");
            config.put("laneway.sleep-idle-seconds", "1");
            config.put("laneway.metrics-endpoint", "true");
            return config;
        }
    }

    /**
     * Three models behind one server, at most two loaded at once ({@code --max-models 2}): stories260K ({@code -m},
     * the default), and from a preset tinystories-656k (a Hugging Face checkpoint, loaded on first use) and stories260K
     * again as {@code pinned}, which is never unloaded to make room.
     */
    public static class Models extends StoriesProfile {
        static final String TINY = "tinystories";
        static final String PINNED = "pinned";

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            try {
                java.nio.file.Path preset = java.nio.file.Files.createTempFile("laneway-models", ".ini");
                preset.toFile().deleteOnExit();
                java.nio.file.Files.writeString(preset, "version = 1\n\n[" + TINY + "]\nmodel = "
                        + shared().resolve("models/tinystories-656k").toAbsolutePath() + "\n\n[" + PINNED + "]\n"
                        + "; the same file as the default model, under another name\nmodel = "
                        + model().toAbsolutePath() + "\npinned = true\n");
                config.put("laneway.models-preset", preset.toString());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            config.put("laneway.max-models", "2");
            config.put("laneway.streams", "2");
            config.put("laneway.queue.max", "16");
            config.put("laneway.metrics-endpoint", "true");
            return config;
        }
    }

    /** The same server with {@code --api-key-file}: the key on the first line of a file, white space around it. */
    public static class WithApiKey extends StoriesProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            try {
                java.nio.file.Path file = java.nio.file.Files.createTempFile("laneway-api-key", ".txt");
                file.toFile().deleteOnExit();
                java.nio.file.Files.writeString(file, "  " + API_KEY + " \nnot part of the key\n");
                config.put("laneway.api-key-file", file.toString());
                config.put("laneway.cors.origins", "https://chat.example,localhost");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return config;
        }
    }

    /**
     * stories260K with two random LoRA adapters from the start ({@code --lora}), {@code a1} (every projection) and
     * {@code a2} (q, k, up and down), written as llama.cpp's converter lays adapters out; a third, {@code a3.gguf}, and
     * a file that is no adapter wait in the adapter directory ({@code --lora-dir}) for loading at run time.
     */
    public static class Lora extends StoriesProfile {
        static final Path DIR;

        static {
            try {
                DIR = Files.createTempDirectory("laneway-lora");
                DIR.toFile().deleteOnExit();
                var all = dev.laneway.engine.bench.RandomAdapter.PROJECTIONS;
                dev.laneway.engine.bench.RandomAdapter.write(model(), DIR.resolve("a1.gguf"), 4, 8, all, 0.08f, 1);
                dev.laneway.engine.bench.RandomAdapter.write(model(), DIR.resolve("a2.gguf"), 8, 0,
                        java.util.Set.of("attn_q.weight", "attn_k.weight", "ffn_up.weight", "ffn_down.weight"),
                        0.05f, 2);
                dev.laneway.engine.bench.RandomAdapter.write(model(), DIR.resolve("a3.gguf"), 2, 4, all, 0.1f, 3);
                Files.writeString(DIR.resolve("notes.gguf"), "not an adapter");
                for (String f : List.of("a1.gguf", "a2.gguf", "a3.gguf", "notes.gguf")) {
                    DIR.resolve(f).toFile().deleteOnExit();
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> config = super.getConfigOverrides();
            config.put("laneway.lora", "a1=" + DIR.resolve("a1.gguf") + ",a2=" + DIR.resolve("a2.gguf"));
            config.put("laneway.lora-dir", DIR.toString());
            config.put("laneway.streams", "4");
            config.put("laneway.queue.max", "16");
            config.put("laneway.metrics-endpoint", "true");
            config.put("laneway.embeddings", "true");
            return config;
        }
    }
}
