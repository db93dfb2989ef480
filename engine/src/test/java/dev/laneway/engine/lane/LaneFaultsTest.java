package dev.laneway.engine.lane;

import dev.laneway.engine.testing.ManualClock;
import dev.laneway.engine.testing.Stories260k;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.DeviceFault;
import dev.laneway.spi.device.KernelRun;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.forward.OneSubmissionForward;
import dev.laneway.engine.kernels.natives.KernelsChooser;
import dev.laneway.engine.model.ForwardCompiler;
import dev.laneway.engine.testing.Packed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lanes on the fault-injecting device: each scenario reproduces a failure accelerators show in the field, and shows
 * that a fresh context per generation and bounded waits contain it to one request.
 */
class LaneFaultsTest {
    private static final int TOKENS = 24;
    private final ManualClock clock = new ManualClock();

    /**
     * How a lane submits a position: op by op (the generic route), or as one submission per token, all layers and the
     * head, over the per-op forward or over the fused layers on the native kernels (the fast lane on the host). A
     * one-submission run has no layer of its own, so faults aimed at a layer hit the token.
     */
    enum Execution {
        PER_OP, ONE_SUBMISSION, FUSED_ONE_SUBMISSION;

        LaneForward forward() {
            return switch (this) {
                case PER_OP -> Stories260k.forward();
                case ONE_SUBMISSION -> new OneSubmissionForward(Stories260k.forward());
                case FUSED_ONE_SUBMISSION -> new OneSubmissionForward(fusedStories260k());
            };
        }

        int layer(int layer) {
            return this == PER_OP ? layer : -1;
        }
    }

    private static LaneForward fused;

    /** stories260K's fused forward, compiled once: its kernels live as long as the test JVM. */
    private static synchronized LaneForward fusedStories260k() {
        if (fused == null) {
            try {
                Container container = Container.open(Packed.stories260k("f32"));
                fused = ForwardCompiler.FUSED.compile(container, Stories260k.DIMS,
                        KernelsChooser.choose(Optional.of("native"), 2));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return fused;
    }

    /** One retry per step: a step faulted twice fails, and takes the device out of service. */
    private static final LaneTimeouts ONE_RETRY = LaneTimeouts.DEFAULT.withRetries(1, Duration.ofSeconds(10));

    private LanePool pool(Execution ex, ChaosDevice device, int streams) {
        return pool(ex, device, streams, ONE_RETRY);
    }

    private LanePool pool(Execution ex, ChaosDevice device, int streams, LaneTimeouts timeouts) {
        return LanePool.create(streams, device, ex.forward(), 8, new int[]{Stories260k.EOS}, timeouts,
                ContextGate.open(), clock);
    }

    /** Lets the backoff of a device out of service pass and waits for the engine loop's probe to put it back. */
    private void backInService(LanePool pool) throws InterruptedException {
        assertTrue(pool.outOfService().isPresent(), "the device is out of service");
        clock.advance(Breaker.MAX_BACKOFF);
        for (int i = 0; i < 500 && pool.outOfService().isPresent(); i++) {
            Thread.sleep(10);
        }
        assertTrue(pool.outOfService().isEmpty(), "a probe put the device back in service");
    }

    private ChaosDevice chaos(ChaosConfig config) {
        return new ChaosDevice("chaos:cpu", new HostDevice(), config, clock);
    }

    private static GenerationRequest greedy() {
        return new GenerationRequest(new int[]{Stories260k.BOS}, TOKENS, Sampling.GREEDY);
    }

    private static List<Integer> generate(LanePool pool) {
        List<Integer> ids = new ArrayList<>();
        pool.generate(greedy(), t -> ids.add(t.id()));
        return ids;
    }

    /** As a client that honours Retry-After does: a generation refused while the device is out of service is retried. */
    private static List<Integer> generateHonouringRetryAfter(LanePool pool) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                return generate(pool);
            } catch (DeviceFaultException e) {
                if (e.retryAfter().isEmpty() || attempt == 1000) {
                    throw e;
                }
                Thread.sleep(5);
            }
        }
    }

    private static List<Integer> faultFree(Execution ex) {
        return generate(LanePool.create(1, new HostDevice(), ex.forward(), 8, new int[]{Stories260k.EOS},
                LaneTimeouts.DEFAULT, ContextGate.open(), Clock.SYSTEM));
    }

    /**
     * Field failure: a device context left idle for a few seconds fails its next command with a timeout, and the
     * device then stays blocked for minutes. Fresh contexts per generation never sit idle.
     */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void idleGapsBetweenGenerationsDoNotFailFreshContexts(Execution ex) {
        ChaosDevice device = chaos(ChaosConfig.none().withIdleTimeout(Duration.ofSeconds(5), Duration.ofMinutes(3)));
        LanePool pool = pool(ex, device, 1);
        List<Integer> expected = faultFree(ex);
        int ok = 0;
        for (int round = 0; round < 10; round++) {
            clock.advance(round % 2 == 0 ? Duration.ofSeconds(15) : Duration.ofSeconds(120));
            assertEquals(expected, generate(pool));
            ok++;
        }
        assertEquals(10, ok);
        assertEquals(0, device.liveContexts());
        assertEquals(10, device.openedContexts(), "one context per generation");
    }

    /** The same rounds on one long-lived context fail: the test above can fail. */
    @Test
    void aLongLivedContextFailsAfterSittingIdle() {
        ChaosDevice device = chaos(ChaosConfig.none().withIdleTimeout(Duration.ofSeconds(5), Duration.ofMinutes(3)));
        DeviceContext kept = device.open(Duration.ofSeconds(1));
        KernelRun step = new KernelRun("matmul", 0, 0, List.of(), () -> { });
        kept.run(step, Duration.ofSeconds(1));
        clock.advance(Duration.ofSeconds(15));
        DeviceFault idle = assertThrows(DeviceFault.class, () -> kept.run(step, Duration.ofSeconds(1)));
        assertTrue(idle.getMessage().contains("idle"), idle.getMessage());
        // The device is now stuck for minutes: even a fresh context's runs fail until it recovers.
        DeviceContext fresh = device.open(Duration.ofSeconds(1));
        assertThrows(DeviceFault.class, () -> fresh.run(step, Duration.ofSeconds(1)));
        clock.advance(Duration.ofMinutes(4));
        DeviceContext later = device.open(Duration.ofSeconds(1));
        later.run(step, Duration.ofSeconds(1));
        kept.close();
        fresh.close();
        later.close();
        assertEquals(0, device.liveContexts());
    }

    /**
     * One stream, one timeout at layer three of position ten: the diagnostic is on record, the step runs again on a
     * fresh context (as the engine loop of several streams does), and the tokens are the fault-free ones.
     */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void aTimeoutAtLayerThreeOfPositionTenIsOnRecordAndItsStepRunsAgainOnAFreshContext(Execution ex) {
        List<Integer> expected = faultFree(ex);
        ChaosDevice device = chaos(ChaosConfig.none().withFailAt(10, ex.layer(3)));
        LanePool pool = pool(ex, device, 1);
        assertEquals(expected, generate(pool));
        Diagnostic d = pool.faults().recent().get(0);
        assertEquals(ex.layer(3), d.layer());
        assertEquals(10, d.position());
        assertEquals("chaos:cpu", d.device());
        assertTrue(d.line().startsWith("device-fault device=chaos:cpu"), d.line());
        assertTrue(!d.args().isEmpty() && d.args().get(0).digest().length() == 16, d.args().toString());
        assertEquals(1, pool.faults().total());
        assertEquals(2, device.openedContexts(), "the retry ran on a fresh context");
        assertEquals(0, device.liveContexts());
    }

    @ParameterizedTest
    @EnumSource(Execution.class)
    void anAbortThatThrowsIsCaughtAndTheLaneLives(Execution ex) {
        ChaosDevice device = chaos(ChaosConfig.none().withFailAt(3, ex.layer(0)).withAbortThrows(true));
        LanePool pool = pool(ex, device, 1);
        assertEquals(faultFree(ex), generate(pool), "the faulted step ran again after the abort threw");
        assertEquals(faultFree(ex), generate(pool));
        assertEquals(0, device.liveContexts());
    }

    /** Field failure: an init run that never completes must not hang the server. */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void anInitRunThatNeverCompletesFailsTheGenerationWithinItsBound(Execution ex) throws Exception {
        ChaosDevice device = chaos(ChaosConfig.none().withInitHangs(true));
        LanePool pool = pool(ex, device, 1);
        DeviceFaultException fault = assertThrows(DeviceFaultException.class, () -> generate(pool));
        assertTrue(fault.getMessage().contains("init run"), fault.getMessage());
        assertEquals(Lane.INIT_KERNEL, pool.faults().recent().get(0).kernel());
        assertEquals(0, device.liveContexts());
        device.reconfigure(ChaosConfig.none());
        backInService(pool);
        assertEquals(faultFree(ex), generate(pool));
    }

    /** Field failure: firmware stops answering under concurrent load; each faulted request fails alone. */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void runsThatTimeOutUnderConcurrentLoadFailOnlyTheirGenerations(Execution ex) throws Exception {
        List<Integer> expected = faultFree(ex);
        ChaosDevice device = chaos(ChaosConfig.none().withLoadTimeouts(true));
        LanePool pool = pool(ex, device, 2);
        // Two contexts held open make the load; a lone generation would pass.
        DeviceContext load = device.open(Duration.ofSeconds(1));
        assertThrows(DeviceFaultException.class, () -> generate(pool));
        load.close();
        backInService(pool);
        assertEquals(expected, generate(pool));
        assertEquals(0, device.liveContexts());
    }

    /**
     * Random timeouts under three streams batched together: a faulted step runs again on a fresh context, so most
     * generations come out exact despite their faults; a step faulted twice fails its generations with the device
     * error and takes the device out of service, so that the generations after it are refused until a probe puts it
     * back; and no context outlives the load.
     */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void liveContextsAreZeroAfterAnyMixOfSuccessesAndFaults(Execution ex) throws Exception {
        List<Integer> expected = faultFree(ex);
        ChaosDevice device = chaos(ChaosConfig.none().withFaultProbability(ex == Execution.PER_OP ? 0.004 : 0.1, 7));
        LanePool pool = pool(ex, device, 3);
        Thread probes = new Thread(() -> {  // the backoff passes while the generations run
            while (!Thread.currentThread().isInterrupted()) {
                clock.advance(Breaker.MAX_BACKOFF);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        probes.start();
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try {
            List<Future<List<Integer>>> runs = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                runs.add(threads.submit(() -> generateHonouringRetryAfter(pool)));
            }
            int ok = 0;
            int faulted = 0;
            for (Future<List<Integer>> f : runs) {
                try {
                    assertEquals(expected, f.get());
                    ok++;
                } catch (java.util.concurrent.ExecutionException e) {
                    assertTrue(e.getCause() instanceof DeviceFaultException, e.getCause().toString());
                    faulted++;
                }
            }
            assertEquals(30, ok + faulted);
            assertTrue(faulted > 0, "random timeouts over some thousand runs fault some steps twice");
            assertTrue(pool.faults().total() > 0 && ok > 0, pool.faults().total() + " faults, " + ok + " exact");
        } finally {
            threads.shutdownNow();
            probes.interrupt();
        }
        assertEquals(0, device.liveContexts());
    }

    /** A step that faults runs again on a fresh context and gives the fault-free tokens; the fault is on record. */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void aFaultedStepRunsAgainOnAFreshContextAndGivesTheFaultFreeTokens(Execution ex) {
        List<Integer> expected = faultFree(ex);
        ChaosDevice device = chaos(ChaosConfig.none().withFailAt(10, ex.layer(3)));
        LanePool pool = pool(ex, device, 2);
        assertEquals(expected, generate(pool));
        assertEquals(1, pool.faults().total());
        Diagnostic d = pool.faults().recent().get(0);
        assertEquals(10, d.position());
        assertEquals(ex.layer(3), d.layer());
        assertEquals(0, device.liveContexts());
        assertEquals(2, device.openedContexts(), "the retry ran on a fresh context");
    }

    /**
     * A step that faults twice fails its generation with the device error, naming where, alone or in the engine loop;
     * the lane recovers and the next generation is exact.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2})
    void aStepFaultedTwiceFailsItsGenerationAndTheNextIsExact(int streams) throws Exception {
        List<Integer> expected = faultFree(Execution.PER_OP);
        ChaosDevice device = chaos(ChaosConfig.none().withFailAt(10, 3).withFailAt(10, 4));
        LanePool pool = pool(Execution.PER_OP, device, streams);
        DeviceFaultException fault = assertThrows(DeviceFaultException.class, () -> generate(pool));
        assertTrue(fault.getMessage().contains("position 10, layer 4"), fault.getMessage());
        assertTrue(pool.faults().recovering());
        assertEquals(2, pool.faults().total());
        assertEquals(0, device.liveContexts());
        backInService(pool);
        assertEquals(expected, generate(pool));
        assertEquals(0, device.liveContexts());
    }

    /**
     * Transient faults cost retries, not requests: five faults in a row at one step, within the default budget of
     * eight retries, each run again on a fresh context, and the generation is exact.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 3})
    void faultsWithinTheRetryBudgetAreAbsorbed(int streams) {
        List<Integer> expected = faultFree(Execution.PER_OP);
        ChaosConfig faults = ChaosConfig.none();
        for (int layer = 0; layer < 5; layer++) {
            faults = faults.withFailAt(10, layer);
        }
        ChaosDevice device = chaos(faults);
        LanePool pool = pool(Execution.PER_OP, device, streams, LaneTimeouts.DEFAULT);
        assertEquals(expected, generate(pool));
        assertEquals(5, pool.faults().total());
        assertFalse(pool.faults().recovering(), "the retry that made it ends the busy period as a success");
        assertEquals(6, device.openedContexts(), "each retry ran on a fresh context");
        assertTrue(pool.outOfService().isEmpty());
        assertEquals(0, device.liveContexts());
    }

    /**
     * A device that keeps failing is taken out of service: a step that fails its whole budget fails its generation,
     * then generations are refused at once (no context opened, no fault) saying when to retry, a probe after the
     * backoff that fails doubles the backoff, and one that passes puts the device back.
     */
    @Test
    void aStepThatFailsItsWholeBudgetTakesTheDeviceOutOfServiceUntilAProbePasses() throws Exception {
        List<Integer> expected = faultFree(Execution.PER_OP);
        ChaosDevice device = chaos(ChaosConfig.none().withFailAt(10, 1).withFailAt(10, 2).withFailAt(10, 3));
        LanePool pool = pool(Execution.PER_OP, device, 2, LaneTimeouts.DEFAULT.withRetries(2, Duration.ofSeconds(10)));
        DeviceFaultException failed = assertThrows(DeviceFaultException.class, () -> generate(pool));
        assertTrue(failed.retryAfter().isEmpty(), "the generation that ran failed as any fault does");
        assertEquals(LaneTimeouts.DEFAULT.probe(), pool.outOfService().orElseThrow());
        long opened = device.openedContexts();
        DeviceFaultException refused = assertThrows(DeviceFaultException.class, () -> generate(pool));
        assertEquals(LaneTimeouts.DEFAULT.probe(), refused.retryAfter().orElseThrow());
        assertTrue(refused.getMessage().contains("out of service") && refused.getMessage().contains("3 times"),
                refused.getMessage());
        assertEquals(opened, device.openedContexts(), "a refused generation opens no context");
        assertEquals(3, pool.faults().total());

        device.reconfigure(ChaosConfig.none().withInitHangs(true));  // the probe fails
        clock.advance(LaneTimeouts.DEFAULT.probe());
        for (int i = 0; i < 500 && pool.outOfService().orElseThrow().compareTo(LaneTimeouts.DEFAULT.probe()) <= 0;
             i++) {
            Thread.sleep(10);
        }
        assertEquals(LaneTimeouts.DEFAULT.probe().multipliedBy(2), pool.outOfService().orElseThrow(),
                "the backoff doubled");
        device.reconfigure(ChaosConfig.none());
        backInService(pool);
        assertEquals(expected, generate(pool));
        assertEquals(0, device.liveContexts());
    }

    /**
     * Field failure: a device that stops answering without an error would hang its request forever; the watchdog
     * fails the stalled run and its context is dropped; the step runs again on a fresh context, and the generation
     * and the next one are exact.
     */
    @ParameterizedTest
    @EnumSource(Execution.class)
    void theWatchdogFailsAGenerationThatStopsMakingProgress(Execution ex) throws Exception {
        List<Integer> expected = faultFree(ex);
        ChaosDevice device = chaos(ChaosConfig.none().withHangAt(6, ex.layer(2)));
        LanePool pool = pool(ex, device, 1);
        Watchdog watchdog = pool.watch(Duration.ofSeconds(30), clock, false);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<List<Integer>> stuck = thread.submit(() -> generate(pool));
            while (device.hanging() == 0) {
                Thread.onSpinWait();
            }
            assertEquals(0, watchdog.check(), "not stalled long enough yet");
            clock.advance(Duration.ofSeconds(31));
            assertEquals(1, watchdog.check());
            // the stalled step's context is dropped and the step runs again on a fresh one
            assertEquals(expected, stuck.get(10, java.util.concurrent.TimeUnit.SECONDS));
            Diagnostic d = pool.faults().recent().get(0);
            assertTrue(d.line().contains("watchdog: no progress"), d.line());
            assertEquals(ex.layer(2), d.layer());
            assertEquals(6, d.position());
        } finally {
            thread.shutdownNow();
        }
        assertEquals(0, device.liveContexts());
        assertEquals(expected, generate(pool));
    }

    /**
     * Closing a model frees its memory, so stopping its streams must wait for what runs on them: the engine loop ends
     * its step and its thread, with one stream as with two; the generation fails as closed and no context is left
     * open.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2})
    void stoppingTheStreamsWaitsForWhatRunsOnThem(int streams) throws Exception {
        ChaosDevice device = chaos(ChaosConfig.none().withHangAt(6, 2));
        LanePool pool = pool(Execution.PER_OP, device, streams);
        pool.watch(Duration.ofSeconds(30), clock, false);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<List<Integer>> running = thread.submit(() -> generate(pool));
            while (device.hanging() == 0) {
                Thread.onSpinWait();
            }
            assertTrue(pool.stop(Duration.ofSeconds(10)));
            assertEquals(0, device.hanging());
            assertEquals(0, device.liveContexts());
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> running.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("the model is closed"), e.getCause().toString());
            IllegalStateException after = assertThrows(IllegalStateException.class, () -> generate(pool));
            assertTrue(after.getMessage().contains("the model is closed"), after.getMessage());
            assertTrue(pool.stop(Duration.ofMillis(1)), "stopped once, stopped for good");
        } finally {
            thread.shutdownNow();
        }
    }

    /** A device that allows one context at a time is shared by lanes, and by processes through a lock file. */
    @Test
    void anExclusiveDeviceIsSharedThroughItsLockWithBoundedWaits(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        ChaosDevice device = chaos(ChaosConfig.none().withExclusive(true));
        assertEquals(1, device.maxContexts());
        java.nio.file.Path lock = tmp.resolve("npu.lock");
        ContextGate mine = new ContextGate(1, java.util.Optional.of(lock));
        ContextGate otherProcess = new ContextGate(1, java.util.Optional.of(lock));
        mine.acquire(device, Duration.ofSeconds(1));
        DeviceFault busy = assertThrows(DeviceFault.class, () -> otherProcess.acquire(device, Duration.ofMillis(200)));
        assertTrue(busy.getMessage().contains("npu.lock"), busy.getMessage());
        mine.release(device);
        otherProcess.acquire(device, Duration.ofSeconds(1));
        otherProcess.release(device);
    }
}
