package dev.laneway.engine.lane;

import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.generate.Sequence;
import dev.laneway.engine.lora.AdapterSet;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.SlotTransfer;
import dev.laneway.spi.StepCounts;
import dev.laneway.spi.TokenSink;
import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceFault;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The streams of one model ({@code --streams N}): a lane over one copy of the weights whose KV cache has a slot per
 * stream, and the engine loop ({@link EngineLoop}) that runs the generations together, one forward per step for all
 * of them; one stream is that loop with one slot. Requests wait in the loop's line for a free slot; the runtime bounds
 * how many it lets in.
 */
public final class LanePool implements AutoCloseable {
    private final Lane lane;
    private final SequenceKind kind;
    private final EngineLoop loop;
    private final Slots slots;
    private final int streams;
    private final FaultLog faults;
    private final Device device;
    private Watchdog watchdog;
    /** Set once stopping has ended the loop: nothing runs on the model. */
    private boolean stopped;

    /** How long closing waits for what runs on the model before its memory is freed. */
    public static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private LanePool(Lane lane, int streams, int maxBatch, int lookup, SequenceKind kind, FaultLog faults,
                     Device device, long cacheRam) {
        this.lane = lane;
        this.streams = streams;
        this.kind = kind;
        this.slots = new Slots(streams);
        this.loop = new EngineLoop(lane, slots, maxBatch, lookup, device.name(), new PromptCache(cacheRam));
        this.faults = faults;
        this.device = device;
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
        return create(streams, device, forward, maxBatch, kv, 0, 0, endOfText, grammars, timeouts, gate, clock);
    }

    /**
     * As above, keeping what the streams' caches held before new prompts overwrote them in up to {@code cacheRam}
     * bytes of host memory ({@link PromptCache}; 0: none), and drafting up to {@code lookup} tokens per step by
     * prompt lookup for the generations to verify (0: none; see {@link EngineLoop}).
     */
    public static LanePool create(int streams, Device device, LaneForward forward, int maxBatch,
                                  KvCache.Precision kv, long cacheRam, int lookup, int[] endOfText, Grammars grammars,
                                  LaneTimeouts timeouts, ContextGate gate, Clock clock) {
        Runtime heap = Runtime.getRuntime();
        KvCache.requireHeap(streams, forward.dims().layers(), forward.dims().contextLength(), forward.dims().kvDim(),
                kv, heap.maxMemory() - (heap.totalMemory() - heap.freeMemory()));
        FaultLog faults = new FaultLog(32);
        Lane lane = new Lane(device, gate, forward, forward.newState(Math.max(maxBatch, streams + lookup), streams,
                streams + lookup, kv), faults, timeouts, clock);
        return new LanePool(lane, streams, maxBatch, lookup, new SequenceKind(forward.dims(), endOfText.clone(), grammars),
                faults, device, cacheRam);
    }

    /** Whether the forward can shift a full context. */
    public boolean shiftsContext() {
        return lane.forward().shiftsContext();
    }

    /** What the sequences of this model are made with. */
    private record SequenceKind(dev.laneway.engine.forward.Dims dims, int[] endOfText, Grammars grammars) {
    }

    /**
     * Starts generations (the choices of one request), request i's tokens going to {@code sinks.get(i)}: they run as
     * far as streams are free, together from the same step, the rest as those end, sharing their prompt's KV cache.
     * The future completes with their results in order, or with the first failure ({@link DeviceFaultException},
     * {@link dev.laneway.spi.InvalidRequestException}) once none of them runs, the others stopped at their next
     * token; a generation whose sink reports its client gone before it starts has no result (null).
     */
    public CompletableFuture<List<GenerationResult>> submit(List<GenerationRequest> requests,
                                                           List<? extends TokenSink> sinks) {
        return submit(requests, java.util.Collections.nCopies(requests.size(), null), sinks);
    }

    /**
     * As above, request i's rows applying the LoRA adapters {@code adapters.get(i)} (null: none); its prompt reuses
     * only a cache those same adapters computed.
     */
    public CompletableFuture<List<GenerationResult>> submit(List<GenerationRequest> requests,
                                                           List<AdapterSet> adapters,
                                                           List<? extends TokenSink> sinks) {
        EngineLoop.Group group = new EngineLoop.Group();
        for (int i = 0; i < requests.size(); i++) {
            AdapterSet set = adapters.get(i);
            GenerationRequest request = set == null ? requests.get(i)
                    : requests.get(i).withCacheSalt(requests.get(i).cacheSalt() + set.cacheSalt());
            if (request.slot() != GenerationRequest.ANY_SLOT) {
                try {
                    checkSlot(request.slot());
                } catch (InvalidRequestException e) {
                    return CompletableFuture.failedFuture(e);
                }
            }
            TokenSink sink = group.guarded(sinks.get(i));
            group.add(request.prompt(), request.cacheSalt(), request.cachePrompt(), request.slot(), sink,
                    slot -> Sequence.generating(request, set, sink, slot, slots.of(slot),
                    kind.dims(), kind.endOfText(), kind.grammars()));
        }
        return loop.submit(group).thenApply(done -> done.stream().map(s -> s == null ? null : s.result()).toList());
    }

    /**
     * Runs a generation and waits for it.
     *
     * @throws DeviceFaultException when the device fails it
     */
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        return await(submit(List.of(request), List.of(sink))).get(0);
    }

    /**
     * Runs several generations (the choices of one request) and waits for them; see {@link #submit}.
     *
     * @throws DeviceFaultException when the device fails one of them; the others stop at their next token
     */
    public List<GenerationResult> generateAll(List<GenerationRequest> requests, List<? extends TokenSink> sinks) {
        return await(submit(requests, sinks));
    }

    /** As above, request i applying the LoRA adapters {@code adapters.get(i)}. */
    public List<GenerationResult> generateAll(List<GenerationRequest> requests, List<AdapterSet> adapters,
                                              List<? extends TokenSink> sinks) {
        return await(submit(requests, adapters, sinks));
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
     * @throws DeviceFaultException when the device fails it
     */
    public float[] nextTokenLogits(int[] prompt) {
        EngineLoop.Group group = new EngineLoop.Group();
        group.add(prompt, GenerationRequest.NO_SALT, true, GenerationRequest.ANY_SLOT, token -> true, slot -> Sequence.logitsOnly(prompt, slot, slots.of(slot), kind.dims()));
        return await(loop.submit(group)).get(0).logits();
    }

    /**
     * Writes what stream {@code slot}'s KV cache holds to {@code file} once no generation runs in it (see
     * {@link SlotFile}); the future fails with {@link InvalidRequestException} when there is no such stream or the
     * file cannot be written.
     */
    public CompletableFuture<SlotTransfer> saveSlot(int slot, Path file) {
        checkSlot(slot);
        return loop.atSlot(slot, s -> SlotFile.save(lane.state().cache(), slots.of(s), s, file));
    }

    /** Fills stream {@code slot}'s KV cache from a file {@link #saveSlot} wrote, once no generation runs in it. */
    public CompletableFuture<SlotTransfer> restoreSlot(int slot, Path file) {
        checkSlot(slot);
        return loop.atSlot(slot, s -> SlotFile.restore(lane.state().cache(), slots.of(s), s, file,
                kind.dims().vocab()));
    }

    /** Empties stream {@code slot}'s KV cache once no generation runs in it; the future holds the tokens it held. */
    public CompletableFuture<Integer> eraseSlot(int slot) {
        checkSlot(slot);
        return loop.atSlot(slot, s -> {
            int held = slots.of(s).length();
            slots.of(s).clear();
            return held;
        });
    }

    private void checkSlot(int slot) {
        if (slot < 0 || slot >= streams) {
            throw new InvalidRequestException("id_slot", "there is no stream " + slot + ": this model has " + streams
                    + (streams == 1 ? " stream (0)" : " streams (0 to " + (streams - 1) + ")"));
        }
    }

    /**
     * The embeddings of prompts, each computed afresh in a free stream and pooled as {@code pooling} says (see
     * {@link Sequence#embedding}); the future completes with them in order, or fails as {@link #submit}'s does.
     *
     * @throws UnsupportedOperationException when the forward cannot give its hidden states
     */
    public CompletableFuture<List<float[]>> embed(List<int[]> prompts, dev.laneway.spi.Pooling pooling,
                                                TokenSink consumer) {
        dev.laneway.engine.forward.FinalNorm norm = lane.forward().finalNorm().orElseThrow(() ->
                new UnsupportedOperationException("this model's forward does not give its hidden states"));
        EngineLoop.Group group = new EngineLoop.Group();
        for (int[] prompt : prompts) {
            TokenSink sink = group.guarded(consumer);
            group.add(prompt, GenerationRequest.NO_SALT, false, GenerationRequest.ANY_SLOT, sink, slot -> Sequence.embedding(prompt, sink, slot,
                    slots.of(slot), kind.dims(), pooling, norm));
        }
        return loop.submit(group).thenApply(done -> done.stream().map(s -> s == null ? null : s.embedding())
                .toList());
    }

    /** What a request's future holds once it has ended; its failure as thrown. */
    private <T> T await(CompletableFuture<T> done) {
        try {
            return done.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for a generation");
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
     * Stops the streams: the engine loop fails its sequences, and the requests waiting for a slot, after the step in
     * flight and ends, within {@code limit}; a request submitted after fails at once. Returns whether nothing runs on
     * the model any more, so that its memory may be freed.
     */
    public synchronized boolean stop(Duration limit) {
        if (stopped) {
            return true;
        }
        stopped = loop.stop(limit);
        if (stopped && watchdog != null) {
            watchdog.close();  // kept until then: it is what ends a run that hangs
        }
        return stopped;
    }

    /** The tokens that end a generation. */
    public int[] endOfGeneration() {
        return kind.endOfText().clone();
    }

    /** How long until the device's next probe while it is out of service; empty while it is in service. */
    public java.util.Optional<Duration> outOfService() {
        return lane.outOfService();
    }

    /** Why the device is out of service. */
    public String outOfServiceReason() {
        return lane.outOfServiceReason();
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

    /** What the host-memory prompt cache holds, and the prompt tokens it has served. */
    public PromptCache.Stats promptCache() {
        return loop.promptCache();
    }

    /** The KV positions running generations hold, of every stream's context together. */
    public dev.laneway.spi.KvUse kvUse() {
        return new dev.laneway.spi.KvUse(loop.positionsInUse(), (long) streams * kind.dims().contextLength());
    }

    /** Generations that are running now. */
    public int busy() {
        return loop.busy();
    }

    /** Generations waiting for a free stream. */
    public int queued() {
        return loop.queued();
    }
}
