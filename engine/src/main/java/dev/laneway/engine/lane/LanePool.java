package dev.laneway.engine.lane;

import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.generate.Sequence;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.StepCounts;
import dev.laneway.spi.TokenSink;
import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceFault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The streams of one model ({@code --streams N}): a lane over one copy of the weights whose KV cache has a slot per
 * stream, and the engine loop ({@link BatchLoop}) that runs the running generations together, one forward per step
 * for all of them; one stream is that loop with one slot. A generation takes the free slot whose cache holds the
 * longest prefix of its prompt (the least recently used one when none does, so other conversations stay cached) and
 * gives it back when it ends.
 */
public final class LanePool implements AutoCloseable {
    private final Lane lane;
    private final SequenceKind kind;
    private final BatchLoop loop;
    private final Slots slots;
    private final Semaphore admission;
    private final int streams;
    private final FaultLog faults;
    private final Device device;
    private final Duration waitForStream;
    private Watchdog watchdog;
    /** Set once stopping begins: nothing new starts. */
    private volatile boolean stopping;
    /** Set once stopping has taken every stream: nothing runs on the model. */
    private boolean stopped;

    /** How long closing waits for what runs on the model before its memory is freed. */
    public static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private LanePool(Lane lane, int streams, int maxBatch, SequenceKind kind, FaultLog faults, Device device,
                     Duration waitForStream) {
        this.lane = lane;
        this.streams = streams;
        this.kind = kind;
        this.slots = new Slots(streams);
        this.loop = new BatchLoop(lane, slots, maxBatch, device.name());
        this.admission = new Semaphore(streams, true);
        this.faults = faults;
        this.device = device;
        this.waitForStream = waitForStream;
    }

    /**
     * Builds {@code streams} streams of a compiled model on a device.
     *
     * @param maxBatch the most prompt tokens per forward call
     */
    public static LanePool create(int streams, Device device, LaneForward forward, int maxBatch, int[] endOfText,
                                  LaneTimeouts timeouts, ContextGate gate, Clock clock) {
        return create(streams, device, forward, maxBatch, KvCache.Precision.F16, endOfText, timeouts, gate, clock);
    }

    /** As above, with the KV cache in the given precision. */
    public static LanePool create(int streams, Device device, LaneForward forward, int maxBatch,
                                  KvCache.Precision kv, int[] endOfText, LaneTimeouts timeouts, ContextGate gate,
                                  Clock clock) {
        return create(streams, device, forward, maxBatch, kv, endOfText, Grammars.NONE, timeouts, gate, clock);
    }

    /** As above, with the grammars that may constrain the generations. */
    public static LanePool create(int streams, Device device, LaneForward forward, int maxBatch,
                                  KvCache.Precision kv, int[] endOfText, Grammars grammars, LaneTimeouts timeouts,
                                  ContextGate gate, Clock clock) {
        Runtime heap = Runtime.getRuntime();
        KvCache.requireHeap(streams, forward.dims().layers(), forward.dims().contextLength(), forward.dims().kvDim(),
                kv, heap.maxMemory() - (heap.totalMemory() - heap.freeMemory()));
        FaultLog faults = new FaultLog(32);
        Lane lane = new Lane(device, gate, forward, forward.newState(Math.max(maxBatch, streams), streams, kv),
                faults, timeouts, clock);
        return new LanePool(lane, streams, maxBatch, new SequenceKind(forward.dims(), endOfText.clone(), grammars),
                faults, device, timeouts.open());
    }

    /** What the sequences of this model are made with. */
    private record SequenceKind(dev.laneway.engine.forward.Dims dims, int[] endOfText, Grammars grammars) {
    }

    /**
     * Runs a generation.
     *
     * @throws DeviceFaultException when the device fails it, or no stream frees up in time
     */
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        return batched(request.prompt(), slot -> generating(request, sink, slot)).result();
    }

    /**
     * Runs several generations (the choices of one request): with the engine loop, as many at once as streams are
     * free (at least one, waited for as {@link #generate} waits), the rest as those end; they share their prompt's KV
     * cache, computed once (see {@link BatchLoop}). Results in order.
     *
     * @throws DeviceFaultException when the device fails one of them; the others stop at their next token
     */
    public List<GenerationResult> generateAll(List<GenerationRequest> requests, List<? extends TokenSink> sinks) {
        if (requests.size() == 1) {
            List<GenerationResult> results = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                results.add(generate(requests.get(i), sinks.get(i)));
            }
            return results;
        }
        admit();
        int permits = 1;
        while (permits < requests.size() && admission.tryAcquire()) {
            permits++;
        }
        AtomicBoolean failed = new AtomicBoolean();
        List<Sequence> made = new ArrayList<>();
        List<CompletableFuture<Sequence>> running = new ArrayList<>();
        boolean[] slotGiven = new boolean[requests.size()];
        try {
            for (int i = 0; i < permits; i++) {
                made.add(sequence(requests.get(i), sinks.get(i), failed));
            }
            running.addAll(loop.submit(made));
            List<GenerationResult> results = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                Sequence done = await(running.get(i));
                slots.give(done.slot());
                slotGiven[i] = true;
                results.add(done.result());
                int next = made.size();
                if (next < requests.size()) {
                    made.add(sequence(requests.get(next), sinks.get(next), failed));
                    running.add(loop.submit(made.get(next)));
                }
            }
            return results;
        } catch (RuntimeException e) {
            failed.set(true);
            throw e;
        } finally {
            for (int i = 0; i < made.size(); i++) {
                if (!slotGiven[i]) {
                    if (i < running.size()) {
                        running.get(i).handle((s, e) -> null).join();
                    }
                    slots.give(made.get(i).slot());
                }
            }
            admission.release(permits);
        }
    }

    private Sequence generating(GenerationRequest request, TokenSink sink, int slot) {
        return Sequence.generating(request, sink, slot, slots.of(slot), kind.dims(), kind.endOfText(),
                kind.grammars());
    }

    /** A generation in a free slot, whose sink stops once {@code failed} is set. */
    private Sequence sequence(GenerationRequest request, TokenSink sink, AtomicBoolean failed) {
        int slot = slots.take(request.prompt());
        try {
            return generating(request, token -> !failed.get() && sink.accept(token), slot);
        } catch (RuntimeException e) {
            slots.give(slot);
            throw e;
        }
    }

    /**
     * Checks that a grammar can constrain these streams' generations.
     *
     * @throws dev.laneway.spi.InvalidRequestException when it cannot
     */
    public void checkGrammar(dev.laneway.spi.OutputGrammar grammar) {
        kind.grammars().check(grammar);
    }

    /**
     * The logits after a prompt's last token, the model's next-token distribution before sampling.
     *
     * @throws DeviceFaultException when the device fails it, or no stream frees up in time
     */
    public float[] nextTokenLogits(int[] prompt) {
        return batched(prompt, slot -> Sequence.logitsOnly(prompt, slot, slots.of(slot), kind.dims())).logits();
    }

    /** Runs a sequence made for a free slot through the engine loop, and waits for its end. */
    private Sequence batched(int[] prompt, java.util.function.IntFunction<Sequence> sequenceIn) {
        admit();
        int slot = slots.take(prompt);
        try {
            return await(loop.submit(sequenceIn.apply(slot)));
        } finally {
            slots.give(slot);
            admission.release();
        }
    }

    /** The sequence once the loop has ended it, or its failure. */
    private Sequence await(CompletableFuture<Sequence> done) {
        try {
            return done.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for a stream");
        }
    }

    /** Waits, bounded, for a free stream. */
    private void admit() {
        if (stopping) {
            throw new IllegalStateException("the model is closed");
        }
        try {
            if (!admission.tryAcquire(waitForStream.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "no stream became free within "
                        + waitForStream.toMillis() + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for a stream");
        }
    }

    /**
     * A watchdog over the lane that fails a step without progress for {@code limit}; started on a timer when
     * {@code start} is set, else driven by calls to {@link Watchdog#check()}.
     */
    public Watchdog watch(Duration limit, Clock clock, boolean start) {
        watchdog = new Watchdog(List.of(lane), limit, clock);
        return start ? watchdog.start() : watchdog;
    }

    @Override
    public void close() {
        stop(CLOSE_WAIT);
    }

    /**
     * Stops the streams: the engine loop fails its sequences after the step in flight and ends, and the callers
     * waiting on them give their streams back, all within {@code limit}; no stream is given out after. Returns whether nothing runs on the model any more, so that its memory may be freed.
     */
    public synchronized boolean stop(Duration limit) {
        if (stopped) {
            return true;
        }
        long deadline = System.nanoTime() + limit.toNanos();
        stopping = true;
        boolean ended = loop.stop(limit);
        try {
            stopped = ended
                    && admission.tryAcquire(streams, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopped && watchdog != null) {
            watchdog.close();  // kept until then: it is what ends a run that hangs
        }
        return stopped;
    }

    public FaultLog faults() {
        return faults;
    }

    public Device device() {
        return device;
    }

    public int streams() {
        return streams;
    }

    /** What the lane's forward steps have run. */
    public StepCounts steps() {
        return lane.steps();
    }

    /** Generations that are running now. */
    public int busy() {
        return streams - admission.availablePermits();
    }
}
