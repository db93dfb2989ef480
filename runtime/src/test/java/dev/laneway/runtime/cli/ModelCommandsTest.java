package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.BuiltRoutes;
import dev.laneway.runtime.routes.RouteSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static dev.laneway.runtime.cli.CommandLineTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The subcommands on the real shared models: pack, routes, run, inspect and tokenize, as a user runs them. */
class ModelCommandsTest {
    private static final String GOLDEN_CONTINUATION = ", there was a little girl named Lily. She loved to play outside"
            + " in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\n"
            + "Lily's mom said";

    @TempDir
    static Path tmp;

    static Path shared(String relative) {
        Path p = Path.of(System.getProperty("shared.dir", "../shared")).resolve(relative);
        if (!Files.exists(p)) {
            throw new IllegalStateException("shared test data missing: " + p);
        }
        return p;
    }

    static Path stories() {
        return shared("models/stories260K/stories260K.gguf");
    }

    @BeforeAll
    static void privateCache() {
        System.setProperty(RouteSetup.CACHE_DIR_PROPERTY, tmp.resolve("cache").toString());
    }

    @AfterAll
    static void restoreCache() {
        System.clearProperty(RouteSetup.CACHE_DIR_PROPERTY);
    }

    @Test
    void runOnTheGgufFileStreamsLlamaCppsGreedyContinuation() {
        CommandLineTest.Outcome o = run("run", "-m", stories().toString(), "-p", "Once upon a time", "-n", "64");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertEquals("Once upon a time" + GOLDEN_CONTINUATION + "\n", o.out());
        assertTrue(o.err().contains("generated: 64 tokens"), o.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"f32", "q8"})
    void packedContainerIsServedAndRuns(String quant) {
        Path out = tmp.resolve("stories-" + quant);
        CommandLineTest.Outcome pack = run("pack", stories().toString(), "-o", out.toString(), "--quant", quant);
        assertEquals(ExitCodes.OK, pack.code(), pack.err());
        assertTrue(pack.err().contains("packing: 100%"), "plain progress lines when not on a terminal: " + pack.err());
        for (String file : new String[]{"model.q4nx", "config.json", "tokenizer.json", "tokenizer_config.json",
                "plan.json"}) {
            assertTrue(Files.isRegularFile(out.resolve(file)), file);
        }
        CommandLineTest.Outcome routes = run("routes", "-m", out.toString());
        assertEquals(ExitCodes.OK, routes.code(), routes.out());
        assertTrue(routes.out().contains("served by: " + BuiltRoutes.denseModelRoute()), routes.out());
        CommandLineTest.Outcome r = run("run", "-m", out.toString(), "-p", "Once upon a time", "-n", "16");
        assertEquals(ExitCodes.OK, r.code(), r.err());
        assertTrue(r.out().startsWith("Once upon a time, there was a little"), r.out());
    }

    /** -m a Hugging Face checkpoint directory packs it once into the cache, as a .gguf file is, and serves it. */
    @Test
    void aCheckpointDirectoryIsPackedIntoTheCacheAndServed() {
        Path checkpoint = shared("models/tinystories-656k");
        CommandLineTest.Outcome first = run("run", "-m", checkpoint.toString(), "-p", "Once upon a time", "-n", "24");
        assertEquals(ExitCodes.OK, first.code(), first.err());
        assertTrue(first.err().contains("packing " + checkpoint.toAbsolutePath().normalize() + " into "
                + tmp.resolve("cache").resolve("q4nx").resolve("tinystories-656k-")), first.err());
        CommandLineTest.Outcome again = run("run", "-m", checkpoint.toString(), "-p", "Once upon a time", "-n", "24");
        assertFalse(again.err().contains("packing "), "packed once: " + again.err());
        assertEquals(first.out(), again.out());
        Path packed = tmp.resolve("tinystories-packed");
        assertEquals(ExitCodes.OK, run("pack", checkpoint.toString(), "-o", packed.toString()).code());
        CommandLineTest.Outcome direct = run("run", "-m", packed.toString(), "-p", "Once upon a time", "-n", "24");
        assertEquals(direct.out(), first.out());
        CommandLineTest.Outcome routes = run("routes", "-m", checkpoint.toString());
        assertTrue(routes.out().contains("served by: " + BuiltRoutes.denseModelRoute()), routes.out());
    }

    /** A container without plan.json (as the other Q4NX engines write them) gets its plan from model_type, and says so. */
    @Test
    void aContainerWithoutAPlanIsServedAndSaysWhatWasDerived() throws IOException {
        Path out = tmp.resolve("no-plan");
        CommandLineTest.Outcome pack = run("pack", stories().toString(), "-o", out.toString(), "--quant", "q8");
        assertTrue(pack.err().contains("note: 36 weight matrices are not whole 32x256 tiles"), pack.err());
        CommandLineTest.Outcome withPlan = run("run", "-m", out.toString(), "-p", "Once upon a time", "-n", "32");
        Files.delete(out.resolve("plan.json"));
        CommandLineTest.Outcome routes = run("routes", "-m", out.toString());
        assertEquals(ExitCodes.OK, routes.code(), routes.out());
        assertTrue(routes.out().contains("derived: the plan from config.json's model_type (no plan.json); llama"
                + " layers, RoPE pairs in halves order, the head lm_head.weight"), routes.out());
        CommandLineTest.Outcome inspect = run("inspect", out.toString());
        assertTrue(inspect.out().contains("derived:\n  the plan from config.json's model_type (no plan.json)"),
                inspect.out());
        CommandLineTest.Outcome withoutPlan = run("run", "-m", out.toString(), "-p", "Once upon a time", "-n", "32");
        assertEquals(ExitCodes.OK, withoutPlan.code(), withoutPlan.err());
        assertEquals(withPlan.out(), withoutPlan.out());
    }

    @Test
    void aDirectoryWithALaneGoesToTheFastLaneAndWithoutOneToAnotherRoute() throws IOException {
        Path lane = tmp.resolve("with-lane");
        assertEquals(ExitCodes.OK, run("pack", stories().toString(), "-o", lane.toString(), "--lane").code());
        assertTrue(Files.isRegularFile(lane.resolve("npu/lane.json")));
        CommandLineTest.Outcome routes = run("routes", "-m", lane.toString());
        assertTrue(routes.out().contains("served by: fastlane"), routes.out());
        if (BuiltRoutes.withDx()) {
            assertTrue(routes.out().matches("(?s).*dx .*declines +the directory carries a lane .*: the fast lane"
                    + " serves it.*"), routes.out());
            CommandLineTest.Outcome forced = run("routes", "-m", lane.toString(), "--opt", "dx=on");
            assertTrue(forced.out().contains("served by: dx"), forced.out());
        }
        CommandLineTest.Outcome r = run("run", "-m", lane.toString(), "-p", "Once upon a time", "-n", "64");
        assertEquals("Once upon a time" + GOLDEN_CONTINUATION + "\n", r.out(), r.err());

        Path plain = tmp.resolve("without-lane");
        assertEquals(ExitCodes.OK, run("pack", stories().toString(), "-o", plain.toString()).code());
        CommandLineTest.Outcome other = run("routes", "-m", plain.toString());
        assertTrue(other.out().contains("served by: " + BuiltRoutes.denseModelRoute()), other.out());
        CommandLineTest.Outcome withoutDx = BuiltRoutes.withDx()
                ? run("routes", "-m", plain.toString(), "--opt", "dx=off") : other;
        assertTrue(withoutDx.out().matches("(?s).*fastlane .*declines +no kernels directory: set LANEWAY_KERNELS.*"),
                withoutDx.out());
        assertTrue(withoutDx.out().contains("served by: generic"), withoutDx.out());
    }

    @Test
    void packRefusesAnExistingOutputAndAnUnknownQuant() {
        CommandLineTest.Outcome exists = run("pack", stories().toString(), "-o", tmp.toString());
        assertEquals(ExitCodes.USAGE, exists.code());
        assertTrue(exists.err().contains("exists already"), exists.err());
        CommandLineTest.Outcome quant = run("pack", stories().toString(), "-o", tmp.resolve("x").toString(),
                "--quant", "q3");
        assertEquals(ExitCodes.USAGE, quant.code());
        assertTrue(quant.err().contains("--quant q3: expected one of q8, q4_1, q4_k, bf16, f32"), quant.err());
    }

    @Test
    void anInterruptedPackLeavesNothingThatLooksValid() throws IOException {
        Path broken = Files.write(tmp.resolve("truncated.gguf"), java.util.Arrays.copyOf(Files.readAllBytes(stories()),
                600_000));
        Path out = tmp.resolve("never");
        CommandLineTest.Outcome o = run("pack", broken.toString(), "-o", out.toString());
        assertEquals(ExitCodes.FAILED, o.code());
        assertTrue(o.err().contains("truncated.gguf"), "the error names the file: " + o.err());
        assertFalse(Files.exists(out));
        try (Stream<Path> left = Files.list(tmp)) {
            assertTrue(left.noneMatch(p -> p.getFileName().toString().contains("never")), "no partial directory");
        }
    }

    @Test
    void checkpointWithTiedEmbeddingsStoredAsLmHeadPacksAndRuns() {
        Path out = tmp.resolve("tinystories");
        CommandLineTest.Outcome pack = run("pack", shared("models/tinystories-656k").toString(), "-o", out.toString());
        assertEquals(ExitCodes.OK, pack.code(), pack.err());
        CommandLineTest.Outcome r = run("run", "-m", out.toString(), "-p", "Once upon a time", "-n", "12");
        assertEquals(ExitCodes.OK, r.code(), r.err());
        assertTrue(r.out().startsWith("Once upon a time, a little girl named Lily lived"), r.out());
    }

    @Test
    void inspectDescribesGgufFilesAndContainers() {
        CommandLineTest.Outcome g = run("inspect", stories().toString());
        assertEquals(ExitCodes.OK, g.code(), g.err());
        assertTrue(g.out().contains("general.architecture = llama"), g.out());
        assertTrue(g.out().contains("token_embd.weight"), g.out());
        assertTrue(g.out().contains("tokenizer: 512 tokens"), g.out());
        Path out = tmp.resolve("inspected");
        assertEquals(ExitCodes.OK, run("pack", stories().toString(), "-o", out.toString(), "--quant", "q4_1").code());
        CommandLineTest.Outcome c = run("inspect", out.toString());
        assertEquals(ExitCodes.OK, c.code(), c.err());
        assertTrue(c.out().contains("TILES_Q4_1"), c.out());
        assertTrue(c.out().contains("\"model_type\""), c.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "falcon"})
    void tokenizeOfAVocabularyGgufReproducesLlamaCppsVectors(String vocab) throws IOException {
        Path gguf = shared("models/vocab/ggml-vocab-" + vocab + ".gguf");
        CommandLineTest.Outcome o = run("tokenize", "-m", gguf.toString(), "-f", gguf + ".inp");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertEquals(Files.readString(Path.of(gguf + ".out")).stripTrailing(), o.out().stripTrailing());
    }

    private static Path checkpoint(String name) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        Files.writeString(dir.resolve("route-policy.json"), "{\"min_confidence\": 0.16, \"default\": \"cpu\", "
                + "\"classes\": {\"code\": {\"device\": \"cpu\"}, \"short\": {\"device\": \"npu\"}}}");
        return dir;
    }

    @Test
    void runWithLayaIsRoutedAndSaysWhere() throws IOException {
        Path laya = checkpoint("laya-heuristic");
        CommandLineTest.Outcome o = run("run", "-m", stories().toString(), "--laya", laya.toString(), "-p",
                "Write a Python function that reverses a list", "-n", "4");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(o.err().contains("route: code 0.24 cpu (candidates: cpu)"), o.err());
        assertTrue(o.out().startsWith("Write a Python function"), o.out());
    }

    @Test
    void runWithAScorerCheckpointAsksTheScorer() throws IOException {
        Path laya = checkpoint("laya-scorer");
        CommandLineTest.Outcome pack = run("pack", stories().toString(), "-o", laya.resolve("scorer").toString());
        assertEquals(ExitCodes.OK, pack.code(), pack.err());
        CommandLineTest.Outcome o = run("run", "-m", stories().toString(), "--laya", laya.toString(), "-p",
                "Once upon a time", "-n", "4");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(o.err().matches("(?s).*route: (code|prose|short) 0\\.\\d\\d cpu \\(candidates: cpu\\)\\R.*"),
                o.err());
    }

    @Test
    void aLayaDirectoryWithoutAPolicyIsRefusedByName() {
        Path missing = tmp.resolve("no-checkpoint");
        String line = "laya: no checkpoint at " + missing + " (expected route-policy.json)";
        CommandLineTest.Outcome routes = run("routes", "-m", stories().toString(), "--laya", missing.toString());
        assertEquals(ExitCodes.USAGE, routes.code(), routes.out());
        assertTrue(routes.out().contains("refused: " + line), routes.out());
        CommandLineTest.Outcome r = run("run", "-m", stories().toString(), "--laya", missing.toString(), "-p", "x");
        assertEquals(ExitCodes.USAGE, r.code(), r.err());
        assertTrue(r.err().contains(line), r.err());
    }

    @Test
    void benchWithVsMeasuresEachModelInTheSameProcess() {
        String m = stories().toString();
        CommandLineTest.Outcome o = run("bench", "-m", m, "-p", "8", "-n", "4", "-r", "3", "--json",
                "--vs", m + " --opt kernels=java");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(o.err().matches("(?s)(.*\\R)?warm-up: ([1-9]|[12][0-9]|30) rounds?\\R.*"), o.err());
        String[] lines = o.out().strip().split("\\R");
        assertEquals(2, lines.length, o.out());
        assertTrue(lines[0].contains("\"route\":\"" + BuiltRoutes.denseModelRoute() + "\""), lines[0]);
        assertTrue(lines[1].contains("\"route\":\"generic\""), "dx steps aside for kernels=java: " + lines[1]);
        for (String line : lines) {
            assertTrue(line.matches(".*\"repetitions\":3,.*\"tg_runs\":\\[[0-9.]+, [0-9.]+, [0-9.]+\\]}"), line);
        }

        CommandLineTest.Outcome noModel = run("bench", "-m", m, "--vs", "kv=f32");
        assertEquals(ExitCodes.USAGE, noModel.code(), noModel.err());
        assertTrue(noModel.err().contains("--vs \"kv=f32\": model path does not exist: kv=f32"), noModel.err());
        CommandLineTest.Outcome badOption = run("bench", "-m", m, "--vs", m + " --streams");
        assertEquals(ExitCodes.USAGE, badOption.code(), badOption.err());
        assertTrue(badOption.err().contains("--vs \"" + m + " --streams\": Missing required parameter for option"
                + " '--streams'"), badOption.err());
    }

    @Test
    void benchWithLayaRoutesOnceAndReportsTheDevice() throws IOException {
        Path laya = checkpoint("laya-bench");
        CommandLineTest.Outcome o = run("bench", "-m", stories().toString(), "--laya", laya.toString(), "-p", "8",
                "-n", "4", "-r", "1", "--json");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(o.err().matches("(?s).*route: (code|prose|short) 0\\.\\d\\d cpu \\(candidates: cpu\\)\\R.*"),
                o.err());
        assertTrue(o.out().contains("\"route\":\"generic\",\"device\":\"cpu\""), o.out());
    }
}
