package dev.laneway.runtime.serve;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which models a server serves, from {@code -m}, {@code --models-dir} and a preset, and what it refuses by name. */
class ModelCatalogTest {
    @TempDir
    Path dir;

    /** The configuration with {@code values} set (an {@code Optional} setting empty unless given). */
    private static LanewayConfig config(Map<String, Object> values) {
        return (LanewayConfig) Proxy.newProxyInstance(LanewayConfig.class.getClassLoader(),
                new Class<?>[]{LanewayConfig.class}, (proxy, method, args) -> {
                    Object v = values.get(method.getName());
                    if (method.getReturnType() == Optional.class) {
                        return Optional.ofNullable(v);
                    }
                    return switch (method.getName()) {
                        case "streams" -> v == null ? 1 : v;
                        case "device" -> "cpu";
                        default -> throw new UnsupportedOperationException(method.getName());
                    };
                });
    }

    private Path file(String name) throws IOException {
        Path p = dir.resolve(name);
        Files.createDirectories(p.getParent());
        return Files.writeString(p, "weights");
    }

    @Test
    void theCommandLineTheDirectoryAndThePresetNameTheModelsInOrder() throws IOException {
        Path first = file("first/a.gguf");
        Path models = Files.createDirectories(dir.resolve("models"));
        file("models/b.gguf");
        Files.createDirectories(models.resolve("c"));
        Files.writeString(models.resolve("c/model.q4nx"), "container");
        file("models/notes.txt");
        file("elsewhere/d.gguf");
        Path preset = Files.writeString(dir.resolve("models.ini"), """
                version = 1
                ; every model
                [*]
                keep-alive = 5m
                opt = ctx=256

                [b]
                alias = bee, b2
                streams = 3
                pinned = true
                opt = ctx=512

                [d]
                model = elsewhere/d.gguf
                load-on-startup = on
                keep-alive = -1
                tags = x, y
                """);
        List<ModelSpec> specs = ModelCatalog.read(config(Map.of("model", List.of(first.toString()), "alias",
                List.of("alpha", "a1"), "opt", List.of("temp-unused=1"), "modelsDir", models.toString(),
                "modelsPreset", preset.toString())));
        assertEquals(List.of("alpha", "b", "c", "d"), specs.stream().map(ModelSpec::id).toList(), "notes.txt is none");
        ModelSpec a = specs.get(0);
        assertEquals(List.of("alpha", "a1"), a.names());
        assertTrue(a.loadOnStartup());
        assertEquals(Optional.of(Duration.ofMinutes(5)), a.keepAlive(), "[*] reaches the models without a section");
        assertEquals(Map.of("temp-unused", "1", "ctx", "256"), a.options().opt());
        ModelSpec b = specs.get(1);
        assertEquals(List.of("b", "bee", "b2"), b.names());
        assertEquals(3, b.options().streams());
        assertEquals("512", b.options().opt().get("ctx"), "a model's own section wins over [*]");
        assertTrue(b.pinned());
        assertFalse(b.loadOnStartup());
        assertEquals(Optional.of("b"), b.options().alias(), "the route serves it under its id");
        ModelSpec d = specs.get(3);
        assertEquals(dir.resolve("elsewhere/d.gguf"), d.path(), "relative to the preset's folder");
        assertTrue(d.loadOnStartup());
        assertEquals(Optional.of(Duration.ofSeconds(-1)), d.keepAlive());
        assertEquals(List.of("x", "y"), d.tags());
        assertEquals(7, d.bytes());
    }

    @Test
    void whatCannotBeServedIsRefusedByName() throws IOException {
        Path a = file("a.gguf");
        Path other = file("other/a.gguf");
        assertMessage("two models are named a", Map.of("model", List.of(a.toString(), other.toString())));
        assertMessage("no model to serve", Map.of());
        assertMessage("holds no model", Map.of("modelsDir", Files.createDirectories(dir.resolve("empty"))
                .toString()));
        for (String[] bad : new String[][]{
                {"[x]\nmodel = a.gguf\ngpu-layers = 99\n", "line 3: unknown key gpu-layers"},
                {"[x]\nmodel = a.gguf\n[x]\n", "line 3: the section [x] is given twice"},
                {"streams = 2\n", "line 1: streams stands before any [section]"},
                {"[y]\nstreams = 2\n", "[y] names no served model, so it needs model = PATH"},
                {"[x]\nmodel = missing.gguf\n", "model path does not exist"},
                {"[x]\nmodel = a.gguf\nkeep-alive = soon\n", "keep-alive must be seconds or a duration"},
                {"[x]\nmodel = a.gguf\nstreams = 0\n", "streams must be at least 1"},
                {"[x]\nmodel = a.gguf\npinned = maybe\n", "pinned must be true or false"},
                {"[*]\nmodel = a.gguf\n[x]\nmodel = a.gguf\n", "[*] cannot give a model path"},
                {"[a]\nmodel = other/a.gguf\n", "is already served from"}}) {
            Path preset = Files.writeString(dir.resolve("p.ini"), bad[0]);
            assertMessage(bad[1], Map.of("model", List.of(a.toString()), "modelsPreset", preset.toString()));
        }
    }

    private static void assertMessage(String expected, Map<String, Object> values) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ModelCatalog.read(config(values)));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
