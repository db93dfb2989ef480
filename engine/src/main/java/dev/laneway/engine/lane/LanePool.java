package dev.laneway.engine.lane;

import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.generate.Generator;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.TokenSink;
import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceFault;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The lanes of one model ({@code --streams N}): N lanes over one copy of the weights, each with its own activations
 * and KV cache. A generation takes the free lane whose KV cache holds the longest prefix of its prompt (the least
 * recently used one when none does, so other conversations stay cached) and gives it back when it ends.
 */
public final class LanePool implements AutoCloseable {
    private final List<Lane> lanes;
    /** Idle lanes, least recently used first. */
    private final Deque<Lane> free;
    private final ReentrantLock lock = new ReentrantLock(true);
    private final Condition freed = lock.newCondition();
    private final FaultLog faults;
    private final Device device;
    private final Duration waitForLane;
    private Watchdog watchdog;

    private LanePool(List<Lane> lanes, FaultLog faults, Device device, Duration waitForLane) {
        this.lanes = List.copyOf(lanes);
        this.free = new ArrayDeque<>(lanes);
        this.faults = faults;
        this.device = device;
        this.waitForLane = waitForLane;
    }

    /**
     * Builds {@code streams} lanes of a compiled model on a device.
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
        Runtime heap = Runtime.getRuntime();
        KvCache.requireHeap(streams, forward.dims().layers(), forward.dims().contextLength(), forward.dims().kvDim(),
                kv, heap.maxMemory() - (heap.totalMemory() - heap.freeMemory()));
        FaultLog faults = new FaultLog(32);
        Generator generator = new Generator(forward.dims(), maxBatch, endOfText);
        List<Lane> lanes = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            lanes.add(new Lane(device, gate, forward, forward.newState(maxBatch, kv), generator, faults, timeouts, clock));
        }
        return new LanePool(lanes, faults, device, timeouts.open());
    }

    /**
     * Runs a generation on a free lane.
     *
     * @throws DeviceFaultException when the device fails it, or no lane frees up in time
     */
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        int[] prompt = request.prompt();
        return onFreeLane(prompt, lane -> lane.generate(request, sink));
    }

    /**
     * The logits after a prompt's last token, computed on a free lane (see {@link Lane#nextTokenLogits}).
     *
     * @throws DeviceFaultException when the device fails it, or no lane frees up in time
     */
    public float[] nextTokenLogits(int[] prompt) {
        return onFreeLane(prompt, lane -> lane.nextTokenLogits(prompt));
    }

    private <T> T onFreeLane(int[] prompt, Function<Lane, T> work) {
        Lane lane = take(prompt);
        try {
            return work.apply(lane);
        } finally {
            lock.lock();
            try {
                free.addLast(lane);
                freed.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Waits, bounded, for a free lane and takes the one that best serves {@code prompt}. */
    private Lane take(int[] prompt) {
        long left = waitForLane.toNanos();
        lock.lock();
        try {
            while (free.isEmpty()) {
                if (left <= 0) {
                    throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "no stream became free within "
                            + waitForLane.toMillis() + " ms");
                }
                left = freed.awaitNanos(left);
            }
            Lane best = free.peekFirst();
            int longest = 0;
            for (Lane l : free) {
                int n = l.reusableFor(prompt);
                if (n > longest) {
                    longest = n;
                    best = l;
                }
            }
            free.remove(best);
            return best;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for a stream");
        } finally {
            lock.unlock();
        }
    }

    /**
     * A watchdog over these lanes that fails generations without progress for {@code limit}; started on a timer
     * when {@code start} is set, else driven by calls to {@link Watchdog#check()}.
     */
    public Watchdog watch(Duration limit, Clock clock, boolean start) {
        watchdog = new Watchdog(lanes, limit, clock);
        return start ? watchdog.start() : watchdog;
    }

    @Override
    public void close() {
        if (watchdog != null) {
            watchdog.close();
        }
    }

    public FaultLog faults() {
        return faults;
    }

    public Device device() {
        return device;
    }

    public int streams() {
        return lanes.size();
    }

    /** Lanes that are generating right now. */
    public int busy() {
        lock.lock();
        try {
            return lanes.size() - free.size();
        } finally {
            lock.unlock();
        }
    }
}
