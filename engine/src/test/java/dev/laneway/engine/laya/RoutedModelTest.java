package dev.laneway.engine.laya;

import dev.laneway.engine.lane.ChaosDevice;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.testing.Checkpoints;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.UnpluggedDevices;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.ServedModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A real container served on two host devices with the router choosing per request, as the generic route does. */
class RoutedModelTest {
    private static final String CHAOS = "chaos:cpu?seed=3";
    private static final String CODE = "Write a Python function that reverses a list";
    private static final String PROSE = "Tell a bedtime story for a child that begins with once upon a time and ends "
            + "happily ever after, please";

    @TempDir
    Path dir;

    private final List<String> log = new ArrayList<>();

    private RoutedModel open(Path checkpoint) throws IOException {
        RouteOptions options = RouteOptions.defaults().withOpt("kernels", "java").withAlias("stories")
                .withLaya(checkpoint);
        return ModelAssembly.routed(Packed.stories260k("f32"), options, "generic", log::add);
    }

    private static String generate(ServedModel model, String prompt, RouteDecision decision) {
        StringBuilder ids = new StringBuilder();
        model.generate(new GenerationRequest(model.tokenize(prompt, true, false), 8, Sampling.GREEDY), decision,
                t -> ids.append(t.id()).append(' ') != null);
        return ids.toString();
    }

    private static long contextsOpened(RoutedModel model, String device) {
        return ((ChaosDevice) ((LanewayModel) model.on(device).orElseThrow()).lanes().device()).openedContexts();
    }

    @Test
    void eachRequestRunsOnTheDeviceItsDecisionNames() throws IOException {
        Path checkpoint = Checkpoints.heuristic(dir.resolve("laya"),
                Checkpoints.policy(0.16, "cpu", CHAOS, "cpu", "cpu", "cpu"));
        try (RoutedModel model = open(checkpoint)) {
            assertEquals(List.of("cpu", CHAOS), model.router().candidates());
            assertEquals("cpu, " + CHAOS, model.info().metadata().get("laya.candidates"));
            assertEquals("cpu", model.info().device());
            long probed = contextsOpened(model, CHAOS);

            RouteDecision code = model.route(RoutingInput.prompt(CODE)).orElseThrow();
            assertEquals("code 0.24 " + CHAOS, code.describe());
            String onChaos = generate(model, CODE, code);
            assertEquals(probed + 1, contextsOpened(model, CHAOS), "the code request ran on " + CHAOS);

            RouteDecision prose = model.route(RoutingInput.prompt(PROSE)).orElseThrow();
            assertEquals("prose 0.39 cpu", prose.describe());
            generate(model, PROSE, prose);
            assertEquals(probed + 1, contextsOpened(model, CHAOS), "the prose request did not");

            assertEquals(onChaos, generate(model, CODE, new RouteDecision("code", 1, "cpu")),
                    "both devices hold the same model");
            assertThrows(IllegalArgumentException.class, () -> generate(model, CODE, new RouteDecision("code", 1,
                    "npu")));
            assertTrue(log.contains("laya: code 0.24 " + CHAOS), log.toString());
            assertTrue(log.contains("laya: prose 0.39 cpu"), log.toString());
        }
    }

    @Test
    void aGenerationWithoutADecisionIsRoutedByItsPromptText() throws IOException {
        Path checkpoint = Checkpoints.heuristic(dir.resolve("laya"),
                Checkpoints.policy(0.16, "cpu", CHAOS, "cpu", "cpu", "cpu"));
        try (RoutedModel model = open(checkpoint)) {
            long before = contextsOpened(model, CHAOS);
            log.clear();
            model.generate(new GenerationRequest(model.tokenize(CODE, true, false), 4, Sampling.GREEDY), t -> true);
            assertEquals(before + 1, contextsOpened(model, CHAOS));
            assertEquals(List.of("laya: code 0.24 " + CHAOS), log);
        }
    }

    @Test
    void devicesThatFailToOpenAreDroppedWithALineSayingWhy() throws IOException {
        Path checkpoint = Checkpoints.heuristic(dir.resolve("laya"),
                Checkpoints.policy(0.16, "cpu", "npu", "cpu", UnpluggedDevices.NAME, "cpu"));
        try (RoutedModel model = open(checkpoint)) {
            assertEquals(List.of("cpu"), model.router().candidates(), "with --device cpu that is one device");
            assertTrue(log.get(0).startsWith("laya: device npu dropped from the candidates: no device named 'npu' "
                    + "(known: cpu, chaos:<device>?knobs"), log.get(0));
            assertEquals("laya: device unplugged dropped from the candidates: " + UnpluggedDevices.WHY, log.get(1));
            assertEquals("laya: checkpoint " + checkpoint + ", policy min_confidence 0.16, default cpu, code -> npu "
                    + "(code wants the fast lane), prose -> cpu, short -> unplugged, long_doc -> cpu; classifier "
                    + "heuristic; candidates cpu", log.get(2));
            RouteDecision code = model.route(RoutingInput.prompt(CODE)).orElseThrow();
            assertEquals("code 0.24 cpu", code.describe(), "the router is still asked; its device is the candidate");
            assertEquals("laya: code 0.24 cpu", log.get(3));
        }
    }

    @Test
    void aScorerCheckpointClassifiesWithTheScorer() throws IOException {
        Path checkpoint = Checkpoints.withStoriesScorer(dir.resolve("laya"),
                Checkpoints.policy(0.0, "cpu", CHAOS, "cpu", "cpu", "cpu"));
        try (RoutedModel model = open(checkpoint)) {
            assertTrue(log.get(0).contains("; classifier scorer " + checkpoint.resolve("scorer") + "; "), log.get(0));
            RouteDecision d = model.route(RoutingInput.prompt(CODE)).orElseThrow();
            Classification expected;
            try (Classifier scorer = LayaCheckpoint.load(checkpoint).openClassifier(dev.laneway.engine.model.ModelAssembly::scorer)) {
                expected = scorer.classify(CODE);
            }
            assertEquals(expected.requestClass().wireName(), d.requestClass());
            assertEquals(expected.confidence(), d.confidence(), 1e-6);
        }
    }

    @Test
    void aMissingOrMalformedCheckpointIsRefusedBeforeAnyDeviceOpens() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        LayaException missing = assertThrows(LayaException.class, () -> open(empty));
        assertEquals("laya: no checkpoint at " + empty + " (expected route-policy.json)", missing.getMessage());

        Path bad = Checkpoints.heuristic(dir.resolve("bad"), "{\"min_confidence\": 0.1, \"default\": \"cpu\", "
                + "\"classes\": {\"poetry\": {\"device\": \"cpu\"}}}");
        LayaException malformed = assertThrows(LayaException.class, () -> open(bad));
        assertEquals("laya: " + bad.resolve("route-policy.json") + ": classes.poetry: unknown class (known: code, "
                + "prose, short, long_doc)", malformed.getMessage());
        assertTrue(log.isEmpty(), "nothing was opened: " + log);

        Path noScorer = Checkpoints.heuristic(dir.resolve("broken-scorer"),
                Checkpoints.policy(0.1, "cpu", "cpu", "cpu", "cpu", "cpu"));
        Files.createDirectories(noScorer.resolve("scorer"));
        LayaException scorer = assertThrows(LayaException.class, () -> open(noScorer));
        assertTrue(scorer.getMessage().startsWith("laya: the scorer " + noScorer.resolve("scorer")
                + " cannot be opened: "), scorer.getMessage());
    }

    @Test
    void theSingleDeviceAssemblyRefusesLayaRatherThanIgnoreIt() {
        RouteOptions options = RouteOptions.defaults().withLaya(dir);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ModelAssembly.perOp(Packed.stories260k("f32"), options, "generic"));
        assertTrue(e.getMessage().contains("does not route requests"), e.getMessage());
    }

    /**
     * The devices' models share one compilation's kernels: closing one (the first opened, too) leaves them to the
     * others, and the last to close releases them.
     */
    @Test
    void closingOneDevicesModelLeavesTheSharedKernelsToTheOthers() throws IOException {
        Path checkpoint = Checkpoints.heuristic(dir.resolve("laya"),
                Checkpoints.policy(0.16, "cpu", CHAOS, "cpu", "cpu", "cpu"));
        RouteOptions options = RouteOptions.defaults().withOpt("kernels", "native").withAlias("stories")
                .withLaya(checkpoint);
        try (RoutedModel model = ModelAssembly.routed(Packed.stories260k("f32"), options, "generic", log::add)) {
            RouteDecision onChaos = new RouteDecision("code", 1, CHAOS);
            String before = generate(model, CODE, onChaos);
            model.on("cpu").orElseThrow().close();
            assertEquals(before, generate(model, CODE, onChaos), "the other device still serves, on the same kernels");
        }
    }

    @Test
    void serveHonoursLaya() throws IOException {
        Path checkpoint = Checkpoints.heuristic(dir.resolve("laya"),
                Checkpoints.policy(0.16, "cpu", "cpu", "cpu", "cpu", "cpu"));
        RouteOptions options = RouteOptions.defaults().withOpt("kernels", "java").withLaya(checkpoint);
        try (ServedModel model = ModelAssembly.serve(Packed.stories260k("f32"), options, "generic",
                new RouteContext(dir))) {
            assertInstanceOf(RoutedModel.class, model);
            assertEquals("code 0.24 cpu", model.route(RoutingInput.prompt(CODE)).orElseThrow().describe());
        }
        try (ServedModel plain = ModelAssembly.serve(Packed.stories260k("f32"),
                RouteOptions.defaults().withOpt("kernels", "java"), "generic", new RouteContext(dir))) {
            assertTrue(plain.route(RoutingInput.prompt(CODE)).isEmpty(), "no --laya: no routing");
        }
    }
}
