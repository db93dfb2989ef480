package dev.laneway.engine.lane;

import dev.laneway.engine.testing.Stories260k;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.TokenSink;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine loop's line: requests beyond the streams wait in it for a slot, in order; one whose client has gone
 * before it starts never runs; one whose client goes while it runs leaves at the next step and frees its slot.
 */
class EngineLoopTest {

    private static LanePool pool(int streams) {
        return LanePool.create(streams, new HostDevice(), Stories260k.forward(), 8, new int[]{Stories260k.EOS},
                LaneTimeouts.DEFAULT, ContextGate.open(), Clock.SYSTEM);
    }

    private static GenerationRequest greedy(int tokens) {
        return new GenerationRequest(new int[]{Stories260k.BOS}, tokens, Sampling.GREEDY);
    }

    /** A sink that records its tokens and whose client can leave. */
    private static final class Client implements TokenSink {
        final List<Integer> ids = new ArrayList<>();
        final AtomicBoolean gone = new AtomicBoolean();
        final CountDownLatch first = new CountDownLatch(1);

        @Override
        public boolean accept(GeneratedToken token) {
            ids.add(token.id());
            first.countDown();
            return true;
        }

        @Override
        public boolean cancelled() {
            return gone.get();
        }
    }

    @Test
    void requestsBeyondTheStreamsWaitInLineAndAClientGoneBeforeItsTurnNeverRuns() throws Exception {
        try (LanePool pool = pool(1)) {
            List<Integer> alone = new ArrayList<>();
            pool.generate(greedy(40), t -> alone.add(t.id()));

            Client running = new Client();
            Client leaves = new Client();
            Client waits = new Client();
            leaves.gone.set(true);  // gone before its turn: the stream is the first request's until it ends
            CompletableFuture<List<GenerationResult>> first = pool.submit(List.of(greedy(40)), List.of(running));
            CompletableFuture<List<GenerationResult>> second = pool.submit(List.of(greedy(40)), List.of(leaves));
            CompletableFuture<List<GenerationResult>> third = pool.submit(List.of(greedy(40)), List.of(waits));
            assertEquals(FinishReason.LENGTH, first.get(10, TimeUnit.SECONDS).get(0).finish());
            assertNull(second.get(10, TimeUnit.SECONDS).get(0), "the request whose client left never started");
            assertEquals(List.of(), leaves.ids);
            assertEquals(FinishReason.LENGTH, third.get(10, TimeUnit.SECONDS).get(0).finish());
            assertEquals(alone, running.ids);
            assertEquals(alone, waits.ids, "the one that waited gives the same tokens");
            assertEquals(0, pool.busy());
            assertEquals(0, pool.queued());
        }
    }

    /**
     * The KV use a load-aware router reads: a running generation holds its positions (its prompt and the tokens fed
     * back so far) of every stream's context together, and gives them back when it ends.
     */
    @Test
    void aRunningGenerationHoldsItsPositionsOfTheKvCacheUntilItEnds() throws Exception {
        try (LanePool pool = pool(2)) {
            int context = Stories260k.forward().dims().contextLength();
            assertEquals(new dev.laneway.spi.KvUse(0, 2L * context), pool.kvUse());
            CountDownLatch atTen = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<Integer> ids = new ArrayList<>();
            CompletableFuture<List<GenerationResult>> run = pool.submit(List.of(greedy(40)), List.of(token -> {
                ids.add(token.id());
                if (ids.size() == 10) {
                    atTen.countDown();
                    try {
                        release.await(10, TimeUnit.SECONDS);  // the loop waits here: its counts stand still
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return true;
            }));
            assertTrue(atTen.await(10, TimeUnit.SECONDS));
            long used = pool.kvUse().used();
            release.countDown();
            assertTrue(used >= 8 && used <= 11, "the prompt and the tokens fed back: " + used);
            assertEquals(40, run.get(10, TimeUnit.SECONDS).get(0).generatedTokens());
            assertEquals(0, pool.kvUse().used(), "an ended generation holds nothing");
            assertEquals(0.0, pool.kvUse().fraction());
        }
    }

    @Test
    void aClientThatLeavesFreesItsSlotAtTheNextStep() throws Exception {
        try (LanePool pool = pool(2)) {
            Client leaves = new Client();
            Client stays = new Client();
            CompletableFuture<List<GenerationResult>> left = pool.submit(List.of(greedy(400)), List.of(leaves));
            CompletableFuture<List<GenerationResult>> kept = pool.submit(List.of(greedy(400)), List.of(stays));
            assertTrue(leaves.first.await(10, TimeUnit.SECONDS));
            leaves.gone.set(true);
            left.get(10, TimeUnit.SECONDS);
            int heard = leaves.ids.size();
            assertTrue(heard < 400, "it left early: " + heard);
            assertTrue(pool.busy() <= 1, "its slot is free: " + pool.busy());
            GenerationResult other = kept.get(30, TimeUnit.SECONDS).get(0);
            assertEquals(other.generatedTokens(), stays.ids.size(), "the other went on to its own end");
            assertTrue(stays.ids.size() > heard, stays.ids.size() + " tokens against " + heard);
        }
    }

    /**
     * A step that faults through its whole retry budget fails the requests in it, and takes the device out of
     * service: a request waiting in line meanwhile is refused without running, saying when to retry; once the probe
     * after the backoff passes, the next request is exact.
     */
    @Test
    void aStepThatFailsItsBudgetFailsItsRequestsAndTheLineIsRefusedUntilAProbePasses() throws Exception {
        List<Integer> expected = new ArrayList<>();
        try (LanePool clean = pool(1)) {
            clean.generate(greedy(24), t -> expected.add(t.id()));
        }
        ChaosDevice device = new ChaosDevice("chaos:cpu", new HostDevice(),
                ChaosConfig.none().withFailAt(10, 3).withFailAt(10, 4), Clock.SYSTEM);
        try (LanePool pool = LanePool.create(1, device, Stories260k.forward(), 8, new int[]{Stories260k.EOS},
                LaneTimeouts.DEFAULT.withRetries(1, java.time.Duration.ofSeconds(10)), ContextGate.open(),
                Clock.SYSTEM)) {
            Client faulted = new Client();
            Client waiting = new Client();
            CompletableFuture<List<GenerationResult>> first = pool.submit(List.of(greedy(24)), List.of(faulted));
            CompletableFuture<List<GenerationResult>> second = pool.submit(List.of(greedy(24)), List.of(waiting));
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> first.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof dev.laneway.spi.DeviceFaultException f && f.retryAfter().isEmpty(),
                    e.getCause().toString());
            e = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> second.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof dev.laneway.spi.DeviceFaultException f && f.retryAfter().isPresent(),
                    e.getCause().toString());
            assertTrue(waiting.ids.isEmpty(), "the refused request never ran");
            for (int i = 0; i < 300 && pool.outOfService().isPresent(); i++) {
                Thread.sleep(10);
            }
            List<Integer> after = new ArrayList<>();
            pool.generate(greedy(24), t -> after.add(t.id()));
            assertEquals(expected, after);
            assertEquals(0, device.liveContexts());
        }
    }
}
