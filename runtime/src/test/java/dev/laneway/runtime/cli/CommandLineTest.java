package dev.laneway.runtime.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandLineTest {
    @TempDir
    static Path tmp;

    /** What a run printed and how it ended. */
    record Outcome(int code, String out, String err) {
    }

    static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = LanewayCommand.execute(args, new PrintWriter(out), new PrintWriter(err));
        return new Outcome(code, out.toString(), err.toString());
    }

    static Stream<Arguments> badInput() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("model"));
        Path text = Files.writeString(tmp.resolve("notes.txt"), "hello");
        return Stream.of(
                Arguments.of(new String[]{"serve"}, "Missing required option: '--model=MODEL'"),
                Arguments.of(new String[]{"serve", "-m", tmp.resolve("absent").toString()}, "model path does not exist"),
                Arguments.of(new String[]{"serve", "-m", text.toString()},
                        "is neither a model directory, a .gguf file nor a model.q4nx file"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--streams", "0"},
                        "--streams must be at least 1, was 0"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--opt", "foo"}, "--opt foo: expected KEY=VALUE"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--port", "70000"},
                        "--port must be between 0 and 65535"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--streams", "two"}, "'two' is not an int"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--bogus"}, "Unknown option: '--bogus'"),
                Arguments.of(new String[]{"routes", "-m", dir.toString(), "--opt", "=1"}, "--opt =1: expected KEY=VALUE"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--api-key-file", tmp.resolve("none").toString()},
                        "--api-key-file: the API key file"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--api-key-file",
                        Files.writeString(tmp.resolve("blank.key"), "  \nsecret\n").toString()},
                        "holds no key on its first line"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--api-key", "k", "--api-key-file",
                        text.toString()}, "give --api-key or --api-key-file, not both"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--alias", "a,,b"}, "--alias must not be blank"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--sleep-idle-seconds", "0"},
                        "--sleep-idle-seconds must be at least 1, or -1 (never), was 0"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--tags", "a, "}, "--tags must not hold a blank"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--lora", "adapter.gguf"},
                        "--lora takes NAME=PATH (the adapter's model id, its GGUF file or PEFT directory), was"
                                + " 'adapter.gguf'"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--lora", "=adapter.gguf"},
                        "--lora takes NAME=PATH"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--lora-dir", dir.resolve("none").toString()},
                        "is not a directory"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--memory-budget", "lots"},
                        "--memory-budget must be a size such as 12G or 800M, was lots"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--memory-budget", "512K"},
                        "--memory-budget must be at least 1 MiB, was 512K"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--keep-alive", "soon"},
                        "--keep-alive must be seconds or a duration such as 5m, or -1, was soon"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--keep-alive", "500ms"},
                        "--keep-alive must be at least 1 s"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--keep-alive", "5m",
                        "--sleep-idle-seconds", "9"}, "give --keep-alive or --sleep-idle-seconds, not both"),
                Arguments.of(new String[]{"serve", "--models-dir", text.toString()}, "--models-dir " + text
                        + " is not a directory"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "--max-models", "-1"},
                        "--max-models must be at least 0, was -1"),
                Arguments.of(new String[]{"serve", "-m", dir.toString(), "-m", tmp.resolve("absent").toString()},
                        "model path does not exist"),
                Arguments.of(new String[]{"run", "-m", dir.toString(), "-m", dir.toString(), "-p", "x"},
                        "-m is given 2 times; this command opens one model"),
                Arguments.of(new String[]{"frobnicate"}, "Unmatched argument"));
    }

    @ParameterizedTest
    @MethodSource("badInput")
    void badInputExitsWithCodeTwoAndOneLineNamingTheProblem(String[] args, String expected) {
        Outcome o = run(args);
        assertEquals(ExitCodes.USAGE, o.code(), o.err());
        assertTrue(o.err().contains(expected), o.err());
        assertEquals(1, o.err().strip().lines().count(), "one line: " + o.err());
        assertFalse(o.err().contains("Exception") || o.err().contains("\tat "), "no stack trace: " + o.err());
    }

    @Test
    void helpListsEverySubcommandAndServeHelpEveryOption() {
        Outcome top = run("--help");
        assertEquals(0, top.code());
        for (String command : new String[]{"serve", "run", "pack", "routes", "inspect", "tokenize", "bench"}) {
            assertTrue(top.out().contains("  " + command + " "), command + " missing from:\n" + top.out());
        }
        Outcome serve = run("serve", "--help");
        assertEquals(0, serve.code());
        for (String option : new String[]{"--model", "--device", "--alias", "--streams", "--opt", "--laya", "--host",
                "--port", "--api-key", "--api-key-file", "--temp", "--top-k", "--top-p", "--min-p", "--repeat-penalty",
                "--seed", "--n-predict", "--reasoning", "--chat-template", "--chat-template-file", "--accept-any-model",
                "--metrics", "--no-slots", "--verbose", "--tags", "--sleep-idle-seconds", "--cors-origins",
                "--context-shift", "--no-webui"}) {
            assertTrue(serve.out().contains(option), option + " missing from:\n" + serve.out());
        }
    }

    @Test
    void aModelDirectoryThatNoRouteServesIsRefusedWithEveryRoutesReason() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty-model"));
        Outcome o = run("routes", "-m", empty.toString());
        assertEquals(ExitCodes.USAGE, o.code());
        assertTrue(o.out().contains("refused: no route serves"), o.out());
        assertTrue(o.out().contains("generic"), o.out());
    }

    /**
     * Several models become configuration the server reads back as they were given: each -m path (a comma in one
     * escaped, as a list element must be), the models directory and preset, and the memory budget in MiB from a size.
     */
    @Test
    void severalModelsAndTheirBoundsBecomeConfiguration() {
        ServeCommand serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a,b.gguf", "-m", "/m/c", "--models-dir", "/m/all",
                "--models-preset", "/m/models.ini", "--max-models", "2", "--memory-budget", "12G");
        java.util.Map<String, String> settings = serve.settings(serve.model.routeOptions());
        assertEquals("/m/a\\,b.gguf,/m/c", settings.get("laneway.model"));
        assertEquals("/m/all", settings.get("laneway.models-dir"));
        assertEquals("/m/models.ini", settings.get("laneway.models-preset"));
        assertEquals("2", settings.get("laneway.max-models"));
        assertEquals("12288", settings.get("laneway.memory-budget-mib"));
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a", "--memory-budget", "1.5GiB");
        assertEquals("1536", serve.settings(serve.model.routeOptions()).get("laneway.memory-budget-mib"));
    }

    /** LoRA adapters become configuration: each NAME=PATH (its path absolute, a comma escaped) and the directory. */
    @Test
    void loraAdaptersBecomeConfiguration() {
        ServeCommand serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a.gguf", "--lora", "sql=/m/sql.gguf", "--lora",
                "chat=/m/chat,v2", "--lora-dir", "/m/adapters");
        java.util.Map<String, String> settings = serve.settings(serve.model.routeOptions());
        assertEquals("sql=/m/sql.gguf,chat=/m/chat\\,v2", settings.get("laneway.lora"));
        assertEquals("/m/adapters", settings.get("laneway.lora-dir"));
    }

    /** llama-server's prompt-lookup flags become the engine's lookup option; other speculative kinds are refused. */
    @Test
    void llamaServersNgramDraftingBecomesPromptLookup() {
        ServeCommand serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a.gguf", "--spec-type", "ngram-simple", "--draft-max", "8");
        assertEquals(java.util.Optional.of("8"), serve.speculative(dev.laneway.spi.RouteOptions.defaults())
                .opt("lookup"));
        serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a.gguf", "--spec-type", "ngram-simple");
        assertEquals(java.util.Optional.of("16"), serve.speculative(dev.laneway.spi.RouteOptions.defaults())
                .opt("lookup"), "llama-server's default --draft-max");
        for (String[] args : java.util.List.of(new String[]{"--spec-type", "draft"}, new String[]{"--draft-max", "4"},
                new String[]{"--draft-max", "-1", "--spec-type", "ngram-simple"})) {
            Outcome o = run(java.util.stream.Stream.concat(java.util.stream.Stream.of("serve", "-m", "/m/a.gguf"),
                    java.util.Arrays.stream(args)).toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, o.code(), String.join(" ", args));
            assertTrue(o.err().contains(args[0]), o.err());
        }
    }

    /**
     * llama.cpp's -ctk and -ctv become the engine's kv option when they name one type it keeps; a type it does not
     * keep, two different types, or a contradicting --opt kv are refused by name.
     */
    @Test
    void llamaCppsCacheTypesBecomeTheKvOption() {
        ServeCommand serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a.gguf", "-ctk", "q8_0", "-ctv", "q8_0");
        assertEquals(java.util.Optional.of("q8"), serve.model.routeOptions().opt("kv"));
        serve = new ServeCommand();
        new picocli.CommandLine(serve).parseArgs("-m", "/m/a.gguf", "--cache-type-k", "f32", "--cache-type-v", "f32",
                "--opt", "kv=f32");
        assertEquals(java.util.Optional.of("f32"), serve.model.routeOptions().opt("kv"));
        for (String[] args : java.util.List.of(new String[]{"-ctk", "q4_0", "-ctv", "q4_0"},
                new String[]{"-ctk", "q8_0"}, new String[]{"-ctv", "bf16"},
                new String[]{"-ctk", "q8_0", "-ctv", "q8_0", "--opt", "kv=f16"})) {
            Outcome o = run(java.util.stream.Stream.concat(java.util.stream.Stream.of("serve", "-m", "/m/a.gguf"),
                    java.util.Arrays.stream(args)).toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, o.code(), String.join(" ", args));
            assertTrue(o.err().contains(args[0]) || o.err().contains("-ctk"), o.err());
        }
    }

    /**
     * Where Vertex AI runs the server ({@code AIP_MODE=PREDICTION}), its port wins over --port and its routes are
     * taken, with the leading slash it may leave out; elsewhere its variables change nothing.
     */
    @Test
    void vertexAisVariablesChooseThePortAndRoutes() {
        java.util.Map<String, String> settings = new java.util.HashMap<>(java.util.Map.of("quarkus.http.port", "8080"));
        ServeCommand.vertex(java.util.Map.of("AIP_HTTP_PORT", "9000"), settings);
        assertEquals(java.util.Map.of("quarkus.http.port", "8080"), settings);
        ServeCommand.vertex(java.util.Map.of("AIP_MODE", "PREDICTION", "AIP_HTTP_PORT", "9000", "AIP_PREDICT_ROUTE",
                "v1/endpoints/1/deployedModels/m:predict", "AIP_HEALTH_ROUTE", "/ping"), settings);
        assertEquals("9000", settings.get("quarkus.http.port"));
        assertEquals("true", settings.get("laneway.vertex.enabled"));
        assertEquals("/v1/endpoints/1/deployedModels/m:predict", settings.get("laneway.vertex.predict-route"));
        assertEquals("/ping", settings.get("laneway.vertex.health-route"));
        UsageException bad = org.junit.jupiter.api.Assertions.assertThrows(UsageException.class, () ->
                ServeCommand.vertex(java.util.Map.of("AIP_MODE", "PREDICTION", "AIP_HTTP_PORT", "http"), settings));
        assertTrue(bad.getMessage().contains("AIP_HTTP_PORT"), bad.getMessage());
    }

    @Test
    void aServerThatCannotStartIsExplainedByItsInnermostCauseOnOneLine() {
        Throwable failure = new RuntimeException("Failed to start quarkus", new IllegalStateException("wrapped",
                new IllegalArgumentException("Configuration validation failed:\n\tSRCFG00050: laneway.x does not"
                        + " map to any root")));
        assertEquals("Configuration validation failed: SRCFG00050: laneway.x does not map to any root",
                ServeCommand.rootCause(failure));
        assertEquals("NullPointerException", ServeCommand.rootCause(new NullPointerException()));
    }
}
