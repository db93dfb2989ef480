package dev.laneway.engine.lane;

import dev.laneway.engine.forward.Batch;
import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.engine.generate.Sequence;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.TokenSink;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The engine loop of one model: the only thread that runs its forward steps, owner of its KV cache slots. Requests
 * arrive from any thread ({@link #submit}) and wait, in order, for a free slot; each step admits what the free slots
 * take (the slot whose cache holds the longest prefix of the prompt), gathers the next token of each running sequence
 * and chunks of the prompts being admitted ({@link StepPlan}), runs one forward over that batch (the weights read once
 * for all of them), and hands each sequence its row of logits to sample. A sequence leaves when it finishes, its sink
 * says stop or its client has gone ({@link TokenSink#cancelled}), and its slot is free for the next step. A prompt
 * that begins as another running sequence's does copies that part of its KV cache instead of computing it
 * ({@link #sharePrefixes}). With prompt lookup ({@code lookup} above 0), generating sequences draft the tokens their
 * text is likely to repeat ({@link Sequence#draft}), up to {@code lookup} drafted rows per step, and each step verifies
 * them with the same forward that computes their next token: a sequence whose drafts hold moves several tokens in one
 * step, which reads the weights once.
 *
 * <p>A device context lives for a busy period: opened when a sequence arrives at an idle loop, dropped when the last
 * one leaves. A step the device fails runs again on a fresh context ({@link Lane#run}); if that faults too, the
 * sequences of the step fail with the device error while the loop goes on with any others.
 */
final class EngineLoop implements AutoCloseable {
    private final Lane lane;
    private final int maxBatch;
    /** The most drafted rows a step takes. */
    private final int lookup;
    private final Slots slots;
    private final PromptCache promptCache;
    private volatile PromptCache.Stats promptCacheStats;
    /** Requests handed in, a group per request (its choices), not yet seen by the loop. */
    private final LinkedBlockingQueue<Group> arrivals = new LinkedBlockingQueue<>();
    /** Members of requests seen by the loop that wait for a free slot, in arrival order. */
    private final Deque<Member> waiting = new ArrayDeque<>();
    private final List<Running> running = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile int busy;
    /** KV positions the running sequences hold, as of the last step or change of the running set. */
    private volatile long positionsInUse;
    private volatile int queued;
    /** The sequences of the step being planned or run, and the rows each feeds. */
    private final List<Running> step = new ArrayList<>();
    private final Queue<SlotTask<?>> slotTasks = new ConcurrentLinkedQueue<>();
    private final int[] stepRows;
    /** Whether running sequence i's prompt waits this step for another to compute the prefix they share. */
    private final boolean[] waitingForPrefix;
    /** Requests whose last member ended in the last step, told once the context is dropped when none is running. */
    private final List<Group> ended = new ArrayList<>();

    /**
     * One request: its members run as far as slots are free, together from the same step (the choices of a
     * request share their prompt), and its future completes when the last has ended. When one fails, the others stop
     * at their next token and the future fails with that first failure.
     */
    static final class Group {
        final CompletableFuture<List<Sequence>> done = new CompletableFuture<>();
        final List<Member> members = new ArrayList<>();
        Sequence[] results;
        int left;
        /** Written by the loop; read by the members' sinks, on the loop's thread too. */
        RuntimeException failure;

        /**
         * Adds a member, its sequence made by {@code make} in the slot the loop gives it ({@code slot}, when not
         * {@link GenerationRequest#ANY_SLOT}, once it is free); {@code reuse} false: its prompt takes nothing from
         * what a slot holds, true: what a slot holds under its cache salt {@code salt}.
         */
        void add(int[] prompt, String salt, boolean reuse, int slot, TokenSink sink, IntFunction<Sequence> make) {
            members.add(new Member(this, members.size(), prompt, salt, reuse, slot, sink, make));
        }

        /** A sink of a member: it stops once another member of the request has failed. */
        TokenSink guarded(TokenSink sink) {
            return new TokenSink() {
                @Override
                public boolean accept(dev.laneway.spi.GeneratedToken token) {
                    return failure == null && sink.accept(token);
                }

                @Override
                public boolean cancelled() {
                    return sink.cancelled();
                }

                @Override
                public void promptProgress(int total, int cached, int processed, long nanos) {
                    sink.promptProgress(total, cached, processed, nanos);
                }
            };
        }
    }

    /**
     * One member of a request, waiting: its prompt and cache salt (to choose its slot), the sink that says whether its client is
     * still there, and how to make its sequence in a slot.
     */
    record Member(Group group, int index, int[] prompt, String salt, boolean reuse, int slot, TokenSink sink,
                  IntFunction<Sequence> make) {
    }

    /** Work on one slot's cache (save, restore, erase), run on the loop's thread once no sequence runs in the slot. */
    private record SlotTask<T>(int slot, IntFunction<T> work, CompletableFuture<T> done) {
        void run() {
            if (done.isDone()) {
                return;  // its caller stopped waiting (and cancelled it)
            }
            try {
                done.complete(work.apply(slot));
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }
    }

    /** Wakes the loop for slot tasks: a request with no members. */
    private static final Group WAKE = new Group();

    /** A sequence in the loop, and the request it belongs to. */
    private record Running(Sequence sequence, Member member) {
    }

    /**
     * @param maxBatch    the most rows one step takes
     * @param lookup      the most drafted rows one step takes (0: no drafting)
     * @param promptCache where a slot's contents go before a new prompt overwrites them
     */
    EngineLoop(Lane lane, Slots slots, int maxBatch, int lookup, String name, PromptCache promptCache) {
        this.lane = lane;
        this.maxBatch = maxBatch;
        this.lookup = lookup;
        this.slots = slots;
        this.promptCache = promptCache;
        this.promptCacheStats = promptCache.stats();
        this.stepRows = new int[lane.state().batch().maxSegments()];
        this.waitingForPrefix = new boolean[lane.state().cache().slots()];
        this.thread = new Thread(this::loop, "laneway-engine-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Hands a request to the loop; its future completes when its members have all ended. */
    CompletableFuture<List<Sequence>> submit(Group group) {
        group.results = new Sequence[group.members.size()];
        group.left = group.members.size();
        arrivals.add(group);
        if (closed && arrivals.remove(group)) {
            group.done.completeExceptionally(closedError());
        }
        return group.done;
    }

    /**
     * Runs {@code work} on slot {@code slot}'s cache on the loop's thread, between steps, once no sequence runs in the
     * slot; requests that wait for a slot wait behind it.
     */
    <T> CompletableFuture<T> atSlot(int slot, IntFunction<T> work) {
        SlotTask<T> task = new SlotTask<>(slot, work, new CompletableFuture<>());
        slotTasks.add(task);
        arrivals.add(WAKE);
        if (closed && slotTasks.remove(task)) {
            task.done().completeExceptionally(closedError());
        }
        return task.done();
    }

    /** Runs the slot tasks whose slots are free, in order. */
    private void runSlotTasks() {
        for (Iterator<SlotTask<?>> it = slotTasks.iterator(); it.hasNext(); ) {
            SlotTask<?> task = it.next();
            if (slots.isFree(task.slot())) {
                it.remove();
                task.run();
            }
        }
    }

    private void loop() {
        while (!closed) {
            try {
                if (running.isEmpty() && waiting.isEmpty() && slotTasks.isEmpty()) {
                    Group first = arrivals.poll(200, TimeUnit.MILLISECONDS);
                    lane.probeIfDue();
                    if (first == null) {
                        continue;
                    }
                    take(first);
                }
                runSlotTasks();
                if (lane.outOfService().isPresent()) {
                    refuseWaiting();
                    continue;
                }
                admit();
                if (!running.isEmpty()) {
                    busyPeriod();
                }
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                // Not a device fault (those are handled per step): fail what runs, keep the loop.
                new ArrayList<>(running).forEach(r -> fail(r, e));
            }
        }
        RuntimeException closedError = closedError();
        new ArrayList<>(running).forEach(r -> fail(r, closedError));
        List<Group> left = new ArrayList<>();
        arrivals.drainTo(left);
        left.forEach(this::take);
        while (!waiting.isEmpty()) {
            Member m = waiting.poll();
            end(m, null, closedError);
        }
        for (SlotTask<?> task; (task = slotTasks.poll()) != null; ) {
            task.done().completeExceptionally(closedError);
        }
        tellEnded();
    }

    /**
     * The device is out of service: every request waiting, or arriving, is refused at once, saying when to retry, and
     * any generation still running (one that was not in the step that failed) ends so too.
     */
    private void refuseWaiting() {
        for (Group g; (g = arrivals.poll()) != null; ) {
            take(g);
        }
        Duration untilProbe = lane.outOfService().orElse(Duration.ZERO);
        DeviceFaultException refused = new DeviceFaultException(lane.device().name(), "device "
                + lane.device().name() + " is out of service (" + lane.outOfServiceReason() + "); it is probed again in "
                + Math.max(1, untilProbe.toSeconds()) + " s", untilProbe);
        new ArrayList<>(running).forEach(r -> fail(r, refused));
        while (!waiting.isEmpty()) {
            end(waiting.poll(), null, refused);
        }
        queued = 0;
        counted();
        tellEnded();
    }

    private static IllegalStateException closedError() {
        return new IllegalStateException("the model is closed");
    }

    /** One context's life: steps until no sequence is left, or a fault ends the context. */
    private void busyPeriod() {
        try {
            lane.begin();
            try {
                while (!closed) {
                    for (Group g; (g = arrivals.poll()) != null; ) {
                        take(g);
                    }
                    runSlotTasks();
                    admit();
                    if (running.isEmpty()) {
                        break;
                    }
                    step();
                    if (running.isEmpty() && arrivals.isEmpty() && waiting.isEmpty()) {
                        break;
                    }
                    tellEnded();
                }
            } finally {
                lane.end();
            }
            tellEnded();
        } catch (DeviceFaultException fault) {
            // The lane ran the step (or opened the context) once more already: its sequences (or all) fail.
            tellEnded();
            List<Running> failed = new ArrayList<>(step.isEmpty() ? running : step);
            step.clear();
            failed.forEach(r -> fail(r, fault));
            tellEnded();
        }
    }

    /** Puts a request's members in the waiting line, in order. */
    private void take(Group group) {
        waiting.addAll(group.members);
        queued = waiting.size();
    }

    /**
     * Gives free slots to waiting members, in order: a member whose client has gone, or whose request has already
     * failed, leaves without starting; one that asks for a slot that is busy, or has work waiting for it, waits and
     * lets those behind it go first.
     */
    private void admit() {
        for (Iterator<Member> it = waiting.iterator(); it.hasNext() && slots.anyFree(); ) {
            Member m = it.next();
            if (m.group().failure != null || m.sink().cancelled()) {
                it.remove();
                end(m, null, null);
                continue;
            }
            if (m.slot() != GenerationRequest.ANY_SLOT && (!slots.isFree(m.slot()) || slotTaskWaits(m.slot()))) {
                continue;
            }
            it.remove();
            int slot = m.slot() != GenerationRequest.ANY_SLOT ? slots.take(m.slot()) : slots.take(m.salt(), m.prompt());
            CachedTokens held = slots.of(slot);
            int reusable = m.reuse() ? held.reusableFor(m.salt(), m.prompt()) : 0;
            if (reusable < held.length() / 2) {
                // most of what the slot holds is about to go (as llama-server judges a prompt's similarity)
                promptCache.keep(lane.state().cache(), held, slot, held.salt());
            }
            if (m.reuse()) {
                promptCache.restore(lane.state().cache(), held, slot, m.salt(), m.prompt(), reusable);
            } else {
                held.clear();
            }
            promptCacheStats = promptCache.stats();
            try {
                running.add(new Running(m.make().apply(slot), m));
            } catch (RuntimeException e) {
                slots.give(slot);
                end(m, null, e);
            }
        }
        queued = waiting.size();
        counted();
    }

    PromptCache.Stats promptCache() {
        return promptCacheStats;
    }

    private boolean slotTaskWaits(int slot) {
        return slotTasks.stream().anyMatch(t -> t.slot() == slot);
    }

    /** Plans a step, runs it, and gives each sequence its logits. */
    private void step() {
        Batch batch = lane.state().batch();
        for (Running r : new ArrayList<>(running)) {
            if (r.member().sink().cancelled()) {
                r.sequence().stop();
                finish(r);
            }
        }
        if (running.isEmpty()) {
            return;
        }
        batch.clear();
        shiftFullContexts();
        sharePrefixes();
        draft();
        for (StepPlan.Entry e : StepPlan.plan(running.size(), i -> running.get(i).sequence().prefilling(),
                i -> running.get(i).sequence().promptLeft(), i -> 1 + running.get(i).sequence().drafts(),
                i -> waitingForPrefix[i], maxBatch, batch.maxSegments())) {
            Running r = running.get(e.index());
            stepRows[step.size()] = r.sequence().feed(batch, e.rows());
            step.add(r);
        }
        float[] logits = lane.run();
        int stride = lane.logitsStride();
        int logitRow = 0;
        int firstRow = 0;
        for (int i = 0; i < step.size(); i++) {
            Running r = step.get(i);
            Sequence s = r.sequence();
            int logitRows = s.logitRows(stepRows[i]);
            if (s.pools()) {
                s.pool(lane.buffer(s.finalNorm().buffer()), firstRow, stepRows[i]);
            }
            firstRow += stepRows[i];
            try {
                if (s.fed(stepRows[i], logits, logitRow * stride, stride)) {
                    finish(r);
                }
            } catch (RuntimeException e) {
                // Its sink failed: that sequence ends with the error, the others go on.
                fail(r, e);
            }
            logitRow += logitRows;
        }
        step.clear();
        counted();
    }

    /**
     * Has the generating sequences draft their next tokens by prompt lookup, in arrival order, within the step's
     * drafted rows and the rows the batch has beside one per sequence.
     */
    private void draft() {
        if (lookup == 0) {
            return;
        }
        int left = Math.min(lookup, Math.max(0, maxBatch - running.size()));
        for (Running r : running) {
            left -= r.sequence().draft(left);
        }
    }

    /** Counts the running sequences and the KV positions they hold, for readers on other threads. */
    private void counted() {
        busy = running.size();
        long positions = 0;
        for (Running r : running) {
            positions += r.sequence().position();
        }
        positionsInUse = positions;
    }

    /** KV positions the running sequences hold. */
    long positionsInUse() {
        return positionsInUse;
    }

    /** A sequence that has ended: its slot is free, and its request learns it once the others have ended too. */
    private void finish(Running r) {
        running.remove(r);
        slots.give(r.sequence().slot());
        counted();
        end(r.member(), r.sequence(), null);
    }

    /** A sequence that failed: its slot's contents are in doubt, so they are forgotten. */
    private void fail(Running r, RuntimeException cause) {
        running.remove(r);
        slots.of(r.sequence().slot()).clear();
        slots.give(r.sequence().slot());
        counted();
        end(r.member(), null, cause);
    }

    /** A member has ended (with its sequence, a failure, or neither when it never started). */
    private void end(Member m, Sequence done, RuntimeException failure) {
        Group g = m.group();
        g.results[m.index()] = done;
        if (failure != null && g.failure == null) {
            g.failure = failure;
        }
        if (--g.left == 0) {
            ended.add(g);
        }
    }

    /** Shifts the context of each generation that has filled it and goes on (its request allows it). */
    private void shiftFullContexts() {
        for (Running r : new ArrayList<>(running)) {
            Sequence s = r.sequence();
            if (!s.contextFull()) {
                continue;
            }
            int[] shift = s.shift();
            try {
                lane.forward().shiftContext(lane.state().cache(), s.slot(), shift[0], shift[1], s.position());
                s.shifted(shift[0], shift[1]);
            } catch (RuntimeException e) {
                fail(r, e);
            }
        }
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
            waitingForPrefix[i] = false;
            if (!s.prefilling() || !running.get(i).member().reuse()) {
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
            for (int j = 0; j < i && !waitingForPrefix[i]; j++) {
                Sequence earlier = running.get(j).sequence();
                int shared = s.commonPrompt(earlier);
                waitingForPrefix[i] = earlier.prefilling() && earlier.position() < shared && s.position() < shared;
            }
        }
    }

    /**
     * Tells the callers of the requests that ended; done after the context is dropped when no sequence is left, so
     * that an idle model holds no context.
     */
    private void tellEnded() {
        for (Group g : ended) {
            if (g.failure != null) {
                g.done.completeExceptionally(g.failure);
            } else {
                g.done.complete(java.util.Arrays.asList(g.results));
            }
        }
        ended.clear();
    }

    /** Sequences running now. */
    int busy() {
        return busy;
    }

    /** Request members waiting for a free slot. */
    int queued() {
        return queued + arrivals.stream().mapToInt(g -> g.members.size()).sum();
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
