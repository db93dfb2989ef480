package dev.laneway.route.dx;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.LaneManifest;
import dev.laneway.engine.plan.Op;
import dev.laneway.engine.plan.Plan;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What dx claims, what it declines and why, and which options it refuses. */
class DxRouteTest {
    private final DxRoute dx = new DxRoute();

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"f32", "q8", "q4_1", "bf16"})
    void claimsThePackedStories260k(String quant) {
        Claim claim = dx.claim(Packed.stories260k(quant), RouteOptions.defaults());
        Claim.Mine mine = assertInstanceOf(Claim.Mine.class, claim);
        assertTrue(mine.shape().startsWith("llama: 5 layers, hidden 64"), mine.shape());
        assertTrue(mine.shape().endsWith("; fused layers (halves rope, separate head)"), mine.shape());
    }

    @Test
    void claimsACheckpointPackedWithHuggingFacesRopeStyle() {
        Claim.Mine mine = assertInstanceOf(Claim.Mine.class, dx.claim(Packed.tinystories("f32"),
                RouteOptions.defaults()));
        assertTrue(mine.shape().endsWith("; fused layers (halves rope, tied head)"), mine.shape());
    }

    @Test
    void isOptionalUnlessForced() {
        RouteOptions options = RouteOptions.defaults();
        assertTrue(dx.optional(options));
        assertTrue(dx.optional(options.withOpt("dx", "auto")));
        assertTrue(dx.optional(options.withOpt("dx", "off")));
        assertFalse(dx.optional(options.withOpt("dx", "on")));
        assertFalse(dx.optional(options.withOpt("dx", "maybe")), "a value dx cannot read is never passed over");
        assertEquals(Set.of("dx", "threads", "ctx", "batch", "kv", "kernels", "chat-template",
                "chat-template-file", "cache-ram", "lookup"), dx.optKeys());
    }

    @Test
    void stepsAsideForDxOffSoTheNextRouteNeedNotKnowTheKey() {
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(Packed.stories260k("f32"),
                RouteOptions.defaults().withOpt("dx", "off")));
        assertEquals("--opt dx=off", d.reason());
        assertTrue(d.recognised());
        assertEquals(Set.of("dx"), d.optKeysUsed());
    }

    @Test
    void declinesAMalformedDxValueNamingIt() {
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(Packed.stories260k("f32"),
                RouteOptions.defaults().withOpt("dx", "maybe")));
        assertEquals("--opt dx=maybe: expected on, off or auto", d.reason());
    }

    @Test
    void declinesWhatIsNotAContainer() throws IOException {
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(Files.createDirectories(tmp.resolve("e")),
                RouteOptions.defaults()));
        assertFalse(d.recognised());
        assertEquals("not a container: dx serves packed dense llama-family models", d.reason());
    }

    @Test
    void declinesAnArchitectureItDoesNotFuse() throws IOException {
        Path dir = copy(Packed.stories260k("f32"), "starcoder2");
        Path config = dir.resolve(Container.CONFIG);
        Files.writeString(config, Files.readString(config).replace("\"llama\"", "\"starcoder2\""));
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(dir, RouteOptions.defaults()));
        assertTrue(d.recognised());
        assertEquals("model_type 'starcoder2' is not an architecture dx fuses (llama, mistral, qwen2, qwen3, phi3)",
                d.reason());
    }

    @Test
    void declinesAPlanWithAnOpItDoesNotFuseNamingTheOp() throws IOException {
        Path dir = copy(Packed.stories260k("f32"), "reordered");
        Plan plan = PlanJson.read(dir.resolve(Container.PLAN));
        List<Op> layer = new ArrayList<>(plan.layer());
        Collections.swap(layer, 9, 10);  // up before gate: the same result, but not the standard plan
        PlanJson.write(new Plan(plan.buffers(), plan.prologue(), layer, plan.epilogue(), plan.logits()),
                dir.resolve(Container.PLAN));
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(dir, RouteOptions.defaults()));
        assertEquals("the container's plan is not one dx fuses: its layer op 9, matmul model.layers.{L}.mlp.up_proj.weight, "
                + "is not in the standard llama plan (which has matmul model.layers.{L}.mlp.gate_proj.weight there)",
                d.reason());
    }

    @Test
    void leavesADirectoryThatCarriesALaneForItsShapeToTheFastLane() throws IOException {
        Path dir = copy(Packed.stories260k("q8"), "with-lane");
        Container container = Container.open(dir);
        LaneManifest.host(container.config()).write(dir.resolve(Container.LANE_DIR));
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(dir, RouteOptions.defaults()));
        assertEquals("the directory carries a lane (" + dir.resolve(Container.LANE_DIR) + "): the fast lane serves it"
                + " (--opt dx=on to serve it with dx)", d.reason());
        assertInstanceOf(Claim.Mine.class, dx.claim(dir, RouteOptions.defaults().withOpt("dx", "on")));

        // A lane for another shape is not the fast lane's to serve; dx takes the directory.
        Map<String, Integer> shape = new HashMap<>(LaneManifest.shapeOf(container.config()));
        shape.put("hidden_size", 4096);
        LaneManifest other = LaneManifest.host(container.config());
        new LaneManifest(other.kernelSet(), other.device(), shape, other.kernels())
                .write(dir.resolve(Container.LANE_DIR));
        assertInstanceOf(Claim.Mine.class, dx.claim(dir, RouteOptions.defaults()));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "laya   | /models/router  | route 'dx' does not honour --laya /models/router: dx runs on the host only, without a router",
            "device | chaos:cpu?p=0.1 | route 'dx' does not honour --device chaos:cpu?p=0.1: dx runs on the host CPU only (--device cpu)",
            "opt    | kernels=java    | route 'dx' does not honour --opt kernels=java: dx runs on the native kernels",
            "opt    | ctx=many        | route 'dx' does not honour --opt ctx=many: expected a whole number from 1 to 16777216"})
    void stepsAsideForAnOptionItCannotHonourNamingIt(String kind, String value, String reason) {
        RouteOptions options = with(RouteOptions.defaults(), kind, value);
        Claim.Declined d = assertInstanceOf(Claim.Declined.class, dx.claim(Packed.stories260k("q8"), options));
        assertEquals(reason, d.reason());
        assertEquals(Set.of("dx"), d.optKeysUsed());

        // Forced, dx claims the directory and the dispatch refuses the same option by name.
        RouteOptions forced = options.withOpt("dx", "on");
        assertInstanceOf(Claim.Mine.class, dx.claim(Packed.stories260k("q8"), forced));
        Optional<OptionRefusal> refusal = dx.refusal(forced);
        assertEquals(reason, refusal.orElseThrow().message("dx"));
    }

    @Test
    void honoursTheEnginesKeysAndANativeCodePath() {
        RouteOptions options = RouteOptions.defaults().withOpt("threads", "2").withOpt("ctx", "512")
                .withOpt("batch", "16").withOpt("kv", "f32").withOpt("kernels", "native-scalar").withAlias("s")
                .withStreams(2);
        assertEquals(Optional.empty(), dx.refusal(options));
        assertInstanceOf(Claim.Mine.class, dx.claim(Packed.stories260k("q8"), options));
    }

    private static RouteOptions with(RouteOptions options, String kind, String value) {
        return switch (kind) {
            case "laya" -> options.withLaya(Path.of(value));
            case "device" -> options.withDevice(value);
            default -> options.withOpt(value.substring(0, value.indexOf('=')), value.substring(value.indexOf('=') + 1));
        };
    }

    private Path copy(Path container, String name) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        try (Stream<Path> files = Files.list(container)) {
            for (Path f : files.toList()) {
                Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
        return dir;
    }
}
