package dev.laneway.runtime.routes;

import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DispatcherTest {
    @TempDir
    Path dir;

    private static Dispatcher dispatcher(TestRoute... routes) {
        return new Dispatcher(RouteCatalog.of(List.of(routes)));
    }

    private void markers(String... names) throws IOException {
        for (String n : names) {
            Files.createFile(dir.resolve(n + ".marker"));
        }
    }

    @Test
    void asksRoutesHighestPriorityFirstAndTheFirstClaimWins() throws IOException {
        markers("low", "high");
        TestRoute low = new TestRoute("low", 1);
        TestRoute high = new TestRoute("high", 50);
        TestRoute mid = new TestRoute("mid", 10);
        DispatchReport report = dispatcher(low, high, mid).dispatch(dir, RouteOptions.defaults());
        assertEquals(List.of("high", "mid", "low"), report.verdicts().stream().map(v -> v.route().name()).toList());
        assertEquals("high", report.serving().orElseThrow().name());
        assertEquals(Verdict.Kind.NOT_ASKED, report.verdicts().get(2).kind());
        assertTrue(low.calls.isEmpty(), "a route after the serving one is not asked");
    }

    @Test
    void genericRouteIsAskedLastWhateverPriorityItDeclares() throws IOException {
        markers("generic", "special");
        TestRoute generic = new TestRoute("generic", Integer.MAX_VALUE);
        generic.generic = true;
        TestRoute special = new TestRoute("special", -5);
        DispatchReport report = dispatcher(generic, special).dispatch(dir, RouteOptions.defaults());
        assertEquals(List.of("special", "generic"), report.verdicts().stream().map(v -> v.route().name()).toList());
        assertEquals("special", report.serving().orElseThrow().name());
    }

    @Test
    void optionalRouteThatCannotServeFallsThroughToTheNext() throws IOException {
        markers("generic");
        TestRoute dx = new TestRoute("dx", 100);
        dx.optional = true;
        dx.claim = d -> Claim.cannotServe("architecture 'bert' is not fused");
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        DispatchReport report = dispatcher(dx, generic).dispatch(dir, RouteOptions.defaults());
        assertEquals("generic", report.serving().orElseThrow().name());
        assertEquals(List.of(report.verdicts().get(0)), report.declines());
        assertEquals("architecture 'bert' is not fused", report.declines().get(0).reason());
    }

    @Test
    void nonOptionalRouteThatRecognisesButCannotServeIsFatalWithItsReason() throws Exception {
        markers("generic");
        TestRoute acme = new TestRoute("acme", 100);
        acme.claim = d -> Claim.cannotServe("the acme manifest is for 7 layers, config.json says 5");
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        DispatchException e = assertThrows(DispatchException.class,
                () -> dispatcher(acme, generic).open(dir, RouteOptions.defaults(), new RouteContext(dir)));
        assertTrue(e.getMessage().contains("route 'acme' cannot serve"), e.getMessage());
        assertTrue(e.getMessage().contains("the acme manifest is for 7 layers, config.json says 5"), e.getMessage());
        assertFalse(generic.calls.contains("open"));
    }

    @Test
    void unknownOptKeyIsRefusedByNameBeforeOpen() throws IOException {
        markers("generic");
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        generic.optKeys = Set.of("threads", "ctx", "kv");
        RouteOptions options = RouteOptions.defaults().withOpt("foo", "1");
        DispatchException e = assertThrows(DispatchException.class,
                () -> dispatcher(generic).open(dir, options, new RouteContext(dir)));
        assertEquals("--opt foo: unknown key for route 'generic' (known: ctx, kv, threads)", e.getMessage());
        assertEquals(List.of("claim"), generic.calls, "open is never reached");
    }

    @Test
    void unhonouredOptionIsRefusedByNameBeforeOpen() throws IOException {
        markers("acme");
        TestRoute acme = new TestRoute("acme", 5);
        acme.refusal = o -> o.streams() > 1
                ? Optional.of(new OptionRefusal("--streams " + o.streams(), "it serves one stream")) : Optional.empty();
        DispatchException e = assertThrows(DispatchException.class,
                () -> dispatcher(acme).open(dir, RouteOptions.defaults().withStreams(2), new RouteContext(dir)));
        assertEquals("route 'acme' does not honour --streams 2: it serves one stream", e.getMessage());
        assertEquals(List.of("claim"), acme.calls, "open is never reached");
    }

    @Test
    void optionalRouteStepsAsideForAnOptionItCannotHonourNamingIt() throws IOException {
        markers("dx", "generic");
        TestRoute dx = new TestRoute("dx", 100);
        dx.optional = true;
        dx.refusal = o -> o.laya().map(l -> new OptionRefusal("--laya " + l, "it runs on the host only"));
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        Path laya = checkpoint();
        DispatchReport report = dispatcher(dx, generic).dispatch(dir, RouteOptions.defaults().withLaya(laya));
        assertEquals("generic", report.serving().orElseThrow().name());
        assertEquals("steps aside: route 'dx' does not honour --laya " + laya + ": it runs on the host only",
                report.declines().get(0).reason());
    }

    @Test
    void optKeyUsedByAnEarlierRouteToDeclineIsAcceptedLaterKeysWin() throws IOException {
        markers("generic");
        TestRoute dx = new TestRoute("dx", 100);
        dx.optional = true;
        dx.optKeys = Set.of("dx", "threads");
        dx.claim = d -> Claim.steppedAside("--opt dx=off", "dx");
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        generic.optKeys = Set.of("threads");
        RouteOptions options = RouteOptions.defaults().withOpt("dx", "on").withOpt("threads", "2").withOpt("dx", "off");
        assertEquals("off", options.opt("dx").orElseThrow(), "a key given twice: the later wins");
        DispatchReport report = dispatcher(dx, generic).dispatch(dir, options);
        assertEquals("generic", report.serving().orElseThrow().name());
    }

    @Test
    void noClaimRefusalNamesTheShapeAndEveryRoutesReason() throws IOException {
        Files.writeString(dir.resolve("config.json"), "{\"model_type\": \"bert\"}");
        TestRoute lane = new TestRoute("fastlane", 50);
        lane.optional = true;
        lane.claim = d -> Claim.notMine("no kernels directory: set LANEWAY_KERNELS, add <dir>/npu, or build with "
                + "laneway.kernels.dir");
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        generic.claim = d -> Claim.notMine("no model.q4nx");
        DispatchReport report = dispatcher(lane, generic).dispatch(dir, RouteOptions.defaults());
        String refusal = report.refusal().orElseThrow();
        assertTrue(refusal.contains("model_type 'bert' in config.json"), refusal);
        assertTrue(refusal.contains("fastlane: no kernels directory: set LANEWAY_KERNELS"), refusal);
        assertTrue(refusal.contains("generic: no model.q4nx"), refusal);
        assertTrue(report.serving().isEmpty());
    }

    @Test
    void aRouteThatThrowsWhileClaimingDeclinesAndDispatchGoesOn() throws IOException {
        markers("generic");
        TestRoute broken = new TestRoute("broken", 10);
        broken.claim = d -> {
            throw new IllegalStateException("boom");
        };
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        DispatchReport report = dispatcher(broken, generic).dispatch(dir, RouteOptions.defaults());
        assertEquals("generic", report.serving().orElseThrow().name());
        assertTrue(report.verdicts().get(0).reason().contains("boom"));
    }

    /** A route that behaves as dx does with --laya: optional unless forced with --opt dx=on, and it declines --laya. */
    private static TestRoute dxLike() {
        TestRoute dx = new TestRoute("dx", 100);
        dx.optKeys = Set.of("dx");
        dx.optional = true;
        dx.refusal = o -> o.laya().map(l -> new OptionRefusal("--laya " + l,
                "it fuses each layer on one device and cannot route requests"));
        return dx;
    }

    private static TestRoute genericRoute() {
        TestRoute generic = new TestRoute("generic", 0);
        generic.generic = true;
        generic.optKeys = Set.of("threads");
        return generic;
    }

    private Path checkpoint() throws IOException {
        Path laya = Files.createDirectories(dir.resolve("laya"));
        Files.writeString(laya.resolve("route-policy.json"), "{\"min_confidence\": 0.16, \"default\": \"cpu\"}");
        return laya;
    }

    @Test
    void layaWithDxForcedIsRefusedByNameBeforeAnyDeviceOpens() throws IOException {
        markers("dx", "generic");
        TestRoute dx = dxLike();
        dx.optional = false;
        TestRoute generic = genericRoute();
        Path laya = checkpoint();
        RouteOptions options = RouteOptions.defaults().withOpt("dx", "on").withLaya(laya);
        DispatchException e = assertThrows(DispatchException.class,
                () -> dispatcher(dx, generic).open(dir, options, new RouteContext(dir)));
        assertEquals("route 'dx' does not honour --laya " + laya
                + ": it fuses each layer on one device and cannot route requests", e.getMessage());
        assertEquals(List.of("claim"), dx.calls, "dx is never opened");
        assertTrue(generic.calls.isEmpty(), "nor is the generic route asked");
    }

    @Test
    void layaMakesDxStepAsideByNameAndTheGenericRouteServes() throws IOException {
        markers("dx", "generic");
        TestRoute dx = dxLike();
        TestRoute generic = genericRoute();
        Path laya = checkpoint();
        DispatchReport report = dispatcher(dx, generic).dispatch(dir, RouteOptions.defaults().withLaya(laya));
        assertEquals("generic", report.serving().orElseThrow().name());
        assertEquals("steps aside: route 'dx' does not honour --laya " + laya
                + ": it fuses each layer on one device and cannot route requests", report.declines().get(0).reason());
    }

    @Test
    void aLayaDirectoryWithoutAPolicyIsRefusedWithItsOwnLineBeforeOpen() throws IOException {
        markers("generic");
        TestRoute generic = genericRoute();
        Path empty = Files.createDirectories(dir.resolve("not-a-checkpoint"));
        RouteOptions options = RouteOptions.defaults().withLaya(empty);
        DispatchReport report = dispatcher(generic).dispatch(dir, options);
        assertEquals("laya: no checkpoint at " + empty + " (expected route-policy.json)", report.refusal().orElseThrow());
        assertEquals(Verdict.Kind.REFUSED, report.verdicts().get(0).kind());
        DispatchException e = assertThrows(DispatchException.class,
                () -> dispatcher(generic).open(dir, options, new RouteContext(dir)));
        assertEquals(report.refusal().orElseThrow(), e.getMessage());
        assertFalse(generic.calls.contains("open"));
    }

    @Test
    void aMissingCheckpointIsFatalEvenForAnOptionalRouteThatWouldHonourLaya() throws IOException {
        markers("lane", "generic");
        TestRoute lane = new TestRoute("lane", 50);
        lane.optional = true;
        TestRoute generic = genericRoute();
        Path missing = dir.resolve("nowhere");
        DispatchReport report = dispatcher(lane, generic).dispatch(dir, RouteOptions.defaults().withLaya(missing));
        assertEquals("laya: no checkpoint at " + missing + " (expected route-policy.json)",
                report.refusal().orElseThrow());
        assertEquals(Verdict.Kind.NOT_ASKED, report.verdicts().get(1).kind(), "no route serves without it");
    }

    @Test
    void dxForcedNamesItsOwnRefusalEvenWhenTheCheckpointIsMissing() throws IOException {
        markers("dx", "generic");
        TestRoute dx = dxLike();
        dx.optional = false;
        Path missing = dir.resolve("nowhere");
        DispatchReport report = dispatcher(dx, genericRoute()).dispatch(dir,
                RouteOptions.defaults().withOpt("dx", "on").withLaya(missing));
        assertTrue(report.refusal().orElseThrow().startsWith("route 'dx' does not honour --laya "),
                report.refusal().get());
    }
}
