package dev.laneway.engine.lane;

import dev.laneway.engine.forward.Batch;
import dev.laneway.engine.generate.BatchRunner;
import dev.laneway.engine.generate.Sequence;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.DeviceFaultException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One engine loop over a lane whose KV cache has a slot per stream: every step gathers the next token of each running
 * sequence and chunks of the prompts being admitted ({@link StepPlan}), runs one forward over that batch (the weights
 * read once for all of them), and hands each sequence its row of logits to sample. Sequences join between steps and
 * leave when they finish or their sink says stop. A prompt that begins as another running sequence's does copies that
 * part of its KV cache instead of computing it (see {@link #sharePrefixes}).
 *
 * <p>A device context lives for a busy period: opened when a sequence arrives at an idle loop, dropped when the last
 * one leaves. A fault during a step drops the context; the step runs again once on a fresh one (it rewrites the same
 * positions), and if that faults too, the sequences of the step fail with the device error while the loop goes on with
 * any others.
 */
final class BatchLoop implements AutoCloseable {
    private final Lane lane;
    private final int maxBatch;
    private final Slots slots;
    /** Sequences handed in, in groups that join the same step. */
    private final LinkedBlockingQueue<List<Running>> arrivals = new LinkedBlockingQueue<>();
    private final List<List<Running>> arrived = new ArrayList<>();
    private final List<Running> running = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    /** Whether the last busy period ended in a fault, so that the step it was running runs once more. */
    private boolean retrying;
    /** The sequences of the step being planned or run, and the rows each feeds; kept when its forward faults. */
    private final List<Running> step = new ArrayList<>();
    private final int[] stepRows;
    /** Whether running sequence i's prompt waits this step for another to compute the prefix they share. */
    private final boolean[] waiting;
    /** Sequences that ended in the last step, told once the context is dropped when none is left running. */
    private final List<Running> ended = new ArrayList<>();

    /** A sequence in the loop, and how its caller learns the outcome. */
    record Running(Sequence sequence, CompletableFuture<Sequence> done) {
    }

    /** @param maxBatch the most rows one step takes */
    BatchLoop(Lane lane, Slots slots, int maxBatch, String name) {
        this.lane = lane;
        this.maxBatch = maxBatch;
        this.slots = slots;
        this.stepRows = new int[lane.state().batch().maxSegments()];
        this.waiting = new boolean[lane.state().cache().slots()];
        this.thread = new Thread(this::loop, "laneway-batch-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Hands a sequence to the loop; the future completes when it ends, or exceptionally with its device fault. */
    CompletableFuture<Sequence> submit(Sequence sequence) {
        return submit(List.of(sequence)).get(0);
    }

    /** Hands sequences to the loop together: they join the same step (the choices of one request). */
    List<CompletableFuture<Sequence>> submit(List<Sequence> sequences) {
        List<Running> group = new ArrayList<>();
        for (Sequence s : sequences) {
            group.add(new Running(s, new CompletableFuture<>()));
        }
        if (closed) {
            failAll(new ArrayList<>(group), new IllegalStateException("the model is closed"));
        } else {
            arrivals.add(group);
        }
        return group.stream().map(Running::done).toList();
    }

    private void loop() {
        while (!closed) {
            try {
                if (running.isEmpty()) {
                    List<Running> first = arrivals.poll(200, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        continue;
                    }
                    running.addAll(first);
                }
                busyPeriod();
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                // Not a device fault (those are handled per step): fail what runs, keep the loop.
                failAll(running, e);
            }
        }
        failAll(running, new IllegalStateException("the model is closed"));
        arrivals.drainTo(arrived);
        arrived.forEach(group -> failAll(new ArrayList<>(group), new IllegalStateException("the model is closed")));
    }

    /** One context's life: steps until no sequence is left, or a fault ends the context. */
    private void busyPeriod() {
        try {
            lane.onFreshContext(runner -> {
                while (!closed) {
                    arrivals.drainTo(arrived);
                    arrived.forEach(running::addAll);
                    arrived.clear();
                    if (running.isEmpty()) {
                        return null;
                    }
                    step(runner);
                    if (running.isEmpty() && arrivals.isEmpty()) {
                        return null;
                    }
                    tellEnded();
                }
                return null;
            });
            tellEnded();
        } catch (DeviceFaultException fault) {
            tellEnded();
            if (!retrying) {
                // A fault in a step, or while the context opened: that step (or the next one) runs once more.
                retrying = true;
                return;
            }
            retrying = false;
            List<Running> failed = new ArrayList<>(step.isEmpty() ? running : step);
            step.clear();
            running.removeAll(failed);
            failed.forEach(r -> slots.of(r.sequence().slot()).clear());
            failAll(failed, fault);
        }
    }

    /** Plans a step (unless one is being retried), runs it, and gives each sequence its logits. */
    private void step(BatchRunner runner) {
        Batch batch = runner.batch();
        if (step.isEmpty()) {
            batch.clear();
            sharePrefixes();
            for (StepPlan.Entry e : StepPlan.plan(running.size(), i -> running.get(i).sequence().prefilling(),
                    i -> running.get(i).sequence().promptLeft(), i -> waiting[i], maxBatch,
                    batch.maxSegments())) {
                Running r = running.get(e.index());
                stepRows[step.size()] = r.sequence().feed(batch, e.rows());
                step.add(r);
            }
        }
        float[] logits = runner.run();
        retrying = false;
        int stride = runner.logitsStride();
        int logitRow = 0;
        for (int i = 0; i < step.size(); i++) {
            Running r = step.get(i);
            Sequence s = r.sequence();
            boolean hadLogits = !s.prefilling() || s.promptLeft() == stepRows[i];
            try {
                if (s.fed(stepRows[i], logits, logitRow * stride)) {
                    running.remove(r);
                    ended.add(r);
                }
            } catch (RuntimeException e) {
                // Its sink failed: that sequence ends with the error, the others go on.
                running.remove(r);
                r.done().completeExceptionally(e);
            }
            if (hadLogits) {
                logitRow++;
            }
        }
        step.clear();
    }

    /**
     * Lets each prompt being admitted take what another running sequence's slot already holds of it (a system prompt
     * they share, the other choices of one request): those positions are copied from that slot, not computed. A
     * prompt whose shared part an earlier one is still computing waits for it, so that the part is computed once.
     */
    private void sharePrefixes() {
        KvCache kv = lane.state().cache();
        for (int i = 0; i < running.size(); i++) {
            Sequence s = running.get(i).sequence();
            waiting[i] = false;
            if (!s.prefilling()) {
                continue;
            }
            int best = s.position();
            int source = -1;
            for (Running other : running) {
                int n = other.sequence() == s ? 0 : s.reusableFrom(slots.of(other.sequence().slot()));
                if (n > best) {
                    best = n;
                    source = other.sequence().slot();
                }
            }
            if (source >= 0) {
                kv.copy(source, s.slot(), s.position(), best);
                s.adopt(best);
            }
            for (int j = 0; j < i && !waiting[i]; j++) {
                Sequence earlier = running.get(j).sequence();
                int shared = s.commonPrompt(earlier);
                waiting[i] = earlier.prefilling() && earlier.position() < shared && s.position() < shared;
            }
        }
    }

    /**
     * Tells the callers of the sequences that ended; done after the context is dropped when no sequence is left, so
     * that an idle model holds no context.
     */
    private void tellEnded() {
        for (Running r : ended) {
            r.done().complete(r.sequence());
        }
        ended.clear();
    }

    private static void failAll(List<Running> list, RuntimeException cause) {
        for (Running r : list) {
            r.done().completeExceptionally(cause);
        }
        list.clear();
    }

    @Override
    public void close() {
        stop(LanePool.CLOSE_WAIT);
    }

    /**
     * Stops the loop: no step starts after the one in flight, whose sequences fail as the rest do, and the loop's
     * thread is waited for up to {@code limit}. Returns whether it has ended, after which nothing it ran reads the
     * model's memory.
     */
    boolean stop(Duration limit) {
        closed = true;
        thread.interrupt();
        try {
            thread.join(Math.max(1, limit.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }
}
