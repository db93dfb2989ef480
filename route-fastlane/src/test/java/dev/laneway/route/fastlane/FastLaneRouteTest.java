package dev.laneway.route.fastlane;

import dev.laneway.engine.container.LaneKernels;
import dev.laneway.engine.container.LaneManifest;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.pack.CheckpointPacker;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.spi.Claim;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which directories the fast lane claims, and that it generates what the per-op forward generates. */
class FastLaneRouteTest {
    @TempDir
    static Path tmp;
    private static Path laneDir;
    private static Path plainDir;
    private final FastLaneRoute route = new FastLaneRoute();

    static Path shared(String relative) {
        Path p = Path.of(System.getProperty("shared.dir", "../shared")).resolve(relative);
        if (!Files.exists(p)) {
            throw new IllegalStateException("shared test data missing: " + p);
        }
        return p;
    }

    @BeforeAll
    static void pack() throws IOException {
        laneDir = tmp.resolve("stories-lane");
        new GgufPacker().pack(shared("models/stories260K/stories260K.gguf"), laneDir,
                new PackOptions(Optional.of("q8"), true), PackProgress.NONE);
        plainDir = tmp.resolve("stories-plain");
        new GgufPacker().pack(shared("models/stories260K/stories260K.gguf"), plainDir,
                new PackOptions(Optional.of("q8"), false), PackProgress.NONE);
    }

    @AfterEach
    void clearKernelsSetting() {
        System.clearProperty(LaneKernels.PROPERTY);
    }

    @Test
    void claimsADirectoryThatCarriesALane() {
        Claim c = route.claim(laneDir, RouteOptions.defaults());
        Claim.Mine mine = assertInstanceOf(Claim.Mine.class, c);
        assertTrue(mine.shape().contains(LaneManifest.HOST_KERNEL_SET), mine.shape());
    }

    @Test
    void declinesTheSameDirectoryWithoutNpuNamingTheThreeWaysToProvideKernels() {
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, route.claim(plainDir, RouteOptions.defaults()));
        assertTrue(!d.recognised(), "a directory without a lane is not the fast lane's kind");
        assertTrue(d.reason().contains("LANEWAY_KERNELS") && d.reason().contains("npu")
                && d.reason().contains("laneway.kernels.dir"), d.reason());
    }

    @Test
    void declinesAManifestForAnotherShapeNamingTheField() throws IOException {
        Path other = tmp.resolve("other-kernels");
        Map<String, Integer> shape = new HashMap<>(LaneManifest.read(laneDir.resolve("npu")).shape());
        shape.put("num_hidden_layers", 6);
        new LaneManifest(LaneManifest.HOST_KERNEL_SET, "cpu", shape, List.of()).write(other);
        System.setProperty(LaneKernels.PROPERTY, other.toString());
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, route.claim(laneDir, RouteOptions.defaults()));
        assertTrue(d.recognised());
        assertTrue(d.reason().contains("num_hidden_layers is 6 in the lane manifest but 5 in config.json"), d.reason());
    }

    @Test
    void laneKernelsFromTheEnvironmentWinOverTheModelsOwnNpu() throws IOException {
        Path elsewhere = tmp.resolve("elsewhere");
        LaneManifest.read(laneDir.resolve("npu")).write(elsewhere);
        System.setProperty(LaneKernels.PROPERTY, elsewhere.toString());
        Claim.Mine mine = assertInstanceOf(Claim.Mine.class, route.claim(plainDir, RouteOptions.defaults()));
        assertTrue(mine.shape().contains(elsewhere.toString()), mine.shape());
        Path empty = Files.createDirectories(tmp.resolve("no-manifest"));
        System.setProperty(LaneKernels.PROPERTY, empty.toString());
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, route.claim(laneDir, RouteOptions.defaults()));
        assertTrue(d.reason().startsWith("LANEWAY_KERNELS (or -Dlaneway.kernels) is " + empty
                + ", which has no lane.json"), d.reason());
        // the decline names all three places a lane can come from
        for (String place : List.of("LANEWAY_KERNELS", "<model dir>/npu/lane.json", "-Dlaneway.kernels.dir")) {
            assertTrue(d.reason().contains(place), place + " in " + d.reason());
        }
    }

    @Test
    void generatesWithTheFusedLayersWhatThePerOpForwardGeneratesOnBothModels() throws Exception {
        Path tiny = tmp.resolve("tinystories-lane");
        new CheckpointPacker().pack(shared("models/tinystories-656k"), tiny, new PackOptions(Optional.empty(), true),
                PackProgress.NONE);
        for (Path dir : List.of(laneDir, tiny)) {
            try (var lane = route.open(dir, RouteOptions.defaults(), new RouteContext(tmp));
                 LanewayModel perOp = ModelAssembly.perOp(dir, RouteOptions.defaults(), "generic")) {
                assertEquals("fastlane", lane.info().route());
                assertEquals("fused", lane.info().metadata().get("forward"), "the host lane runs the fused layers");
                int[] prompt = perOp.tokenize("Once upon a time", true, true);
                assertEquals(greedy(perOp, prompt), greedy(lane, prompt), dir.toString());
            }
        }
    }

    @Test
    void honoursLayaVisiblyThroughTheRouter() throws Exception {
        Path laya = Files.createDirectories(tmp.resolve("laya"));
        Files.writeString(laya.resolve("route-policy.json"), "{\"min_confidence\": 0.1, \"default\": \"cpu\","
                + " \"classes\": {\"long_doc\": {\"device\": \"cpu\", \"why\": \"host memory\"}}}");
        RouteOptions options = RouteOptions.defaults().withLaya(laya);
        assertTrue(route.refusal(options).isEmpty(), "the fast lane honours --laya");
        try (var model = route.open(laneDir, options, new RouteContext(tmp))) {
            var decision = model.route(dev.laneway.spi.RoutingInput.prompt("x".repeat(1024))).orElseThrow();
            assertEquals("long_doc 1.00 cpu", decision.describe());
        }
    }

    private static List<Integer> greedy(dev.laneway.spi.ServedModel m, int[] prompt) {
        List<Integer> ids = new ArrayList<>();
        m.generate(new GenerationRequest(prompt, 48, Sampling.GREEDY), t -> ids.add(t.id()));
        return ids;
    }
}
