package dev.laneway.engine.lane;

import dev.laneway.engine.forward.ForwardState;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.StepInfo;
import dev.laneway.engine.forward.Batch;
import dev.laneway.engine.generate.BatchRunner;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.StepCounts;
import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.DeviceFault;
import dev.laneway.spi.device.KernelRun;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A model on a device (docs/lanes.md): the activations and a KV cache with a slot per stream, allocated once (the
 * weights are shared), the cache growing as positions are first reached. Each busy period gets a fresh context:
 * {@code begin} opens and configures it (an init run with its own bound, then the output-head configuration), each
 * step's kernels run on it with deadlines, and {@code end} drops it on every path, exceptions included. A device fault
 * ends the context with a recorded diagnostic; the engine loop that drives the lane runs the step again on a fresh
 * context, and fails that step's sequences if it faults again. The KV cache outlives the context.
 */
public final class Lane {
    /** The name of the context's init run. */
    public static final String INIT_KERNEL = "init";
    /** The name of the output-head configuration run. */
    public static final String HEAD_KERNEL = "configure_head";
    private static final int DIGEST_BYTES = 64;

    private final Device device;
    private final ContextGate gate;
    private final LaneForward forward;
    private final ForwardState state;
    private final FaultLog faults;
    private final LaneTimeouts timeouts;
    private final Clock clock;
    private volatile long lastProgress;
    private volatile Generation current;
    private volatile String stalled;
    /** Steps run, the sequences and rows in them: written by the one thread that runs steps, read by metrics. */
    private final AtomicLong steps = new AtomicLong();
    private final AtomicLong stepSequences = new AtomicLong();
    private final AtomicLong stepRows = new AtomicLong();

    public Lane(Device device, ContextGate gate, LaneForward forward, ForwardState state, FaultLog faults,
                LaneTimeouts timeouts, Clock clock) {
        this.device = device;
        this.gate = gate;
        this.forward = forward;
        this.state = state;
        this.faults = faults;
        this.timeouts = timeouts;
        this.clock = clock;
    }

    public Device device() {
        return device;
    }

    /** When the lane last made progress (a generation began or a kernel run ended), on its clock. */
    public long lastProgress() {
        return lastProgress;
    }

    /** Whether a generation is running on the lane. */
    public boolean busy() {
        return current != null;
    }

    /**
     * Fails the running generation, if any, for want of progress: its context is aborted, and the generation ends
     * with a device fault at its next step. Called by the {@link Watchdog}.
     */
    void stall(String reason) {
        Generation g = current;
        if (g != null) {
            stalled = reason;
            g.abort();
        }
    }

    /** The activations and KV cache the lane's forwards run on. */
    ForwardState state() {
        return state;
    }

    /**
     * Runs {@code work} on a fresh context: open and configure it, then drop it on every path. A device fault is
     * recorded with its diagnostic and comes out as a {@link DeviceFaultException}; the context is gone by then.
     */
    <T> T onFreshContext(Function<BatchRunner, T> work) {
        gate.acquire(device, timeouts.open());
        Generation g = null;
        try {
            lastProgress = clock.nanoTime();
            stalled = null;
            g = new Generation(openContext());
            current = g;
            g.configure();
            T result = work.apply(g);
            faults.succeeded();
            return result;
        } catch (DeviceFault fault) {
            throw failed(g, fault);
        } finally {
            current = null;
            if (g != null) {
                g.end();
            }
            gate.release(device);
        }
    }

    /** What the forward steps of this lane have run. */
    StepCounts steps() {
        return new StepCounts(steps.get(), stepSequences.get(), stepRows.get());
    }

    /** Opens a fresh context; a device that cannot is on record. */
    private DeviceContext openContext() {
        try {
            return device.open(timeouts.open());
        } catch (DeviceFault fault) {
            faults.record(new Diagnostic(Instant.now(), device.name(), -1, "open", -1, -1, Duration.ZERO,
                    timeouts.open(), List.of(), Duration.ZERO, Duration.ZERO, fault.getMessage()));
            throw fault;
        }
    }

    private DeviceFaultException failed(Generation g, DeviceFault fault) {
        if (g != null) {
            faults.record(g.diagnose(fault));
            g.abort();
        }
        return new DeviceFaultException(device.name(), "device " + device.name() + " failed this generation: "
                + fault.getMessage(), fault);
    }

    /** One busy period's use of a context: the batches it runs, each step with a deadline. */
    private final class Generation implements BatchRunner {
        private volatile DeviceContext context;
        private long opened = clock.nanoTime();
        private long lastRunEnd = opened;
        private KernelRun inFlight;
        private StepInfo inFlightStep;
        private long inFlightStart;
        private long inFlightIdle;
        private Duration inFlightDeadline = Duration.ZERO;

        Generation(DeviceContext context) {
            this.context = context;
        }

        /** The init run, with its own bound, then the output-head configuration. */
        void configure() {
            run(KernelRun.named(INIT_KERNEL), timeouts.init(), null);
            run(KernelRun.named(HEAD_KERNEL), timeouts.run(), null);
        }

        @Override
        public Batch batch() {
            return state.batch();
        }

        @Override
        public float[] run() {
            float[] logits = forward.forward(state, (info, step, st, batch, start) ->
                    run(new KernelRun(info.kernel(), info.layer(), start, List.of(), () -> step.run(st, batch, start)),
                            timeouts.run(), info));
            steps.incrementAndGet();
            stepSequences.addAndGet(state.batch().segments());
            stepRows.addAndGet(state.batch().rows());
            return logits;
        }

        @Override
        public int logitsStride() {
            return forward.logitsStride();
        }

        void run(KernelRun run, Duration deadline, StepInfo info) {
            long now = clock.nanoTime();
            inFlight = run;
            inFlightStep = info;
            inFlightStart = now;
            inFlightIdle = now - lastRunEnd;
            inFlightDeadline = deadline;
            try {
                context.run(run, deadline);
            } catch (DeviceFault fault) {
                throw stalled != null ? watchdogFault(fault) : fault;
            }
            if (stalled != null) {
                throw watchdogFault(null);
            }
            lastRunEnd = clock.nanoTime();
            lastProgress = lastRunEnd;
            inFlight = null;
        }

        private DeviceFault watchdogFault(DeviceFault cause) {
            return new DeviceFault(device.name(), DeviceFault.Kind.TIMEOUT, "watchdog: " + stalled, cause);
        }

        Diagnostic diagnose(DeviceFault fault) {
            long now = clock.nanoTime();
            KernelRun run = inFlight;
            DeviceContext c = context;
            return new Diagnostic(Instant.now(), device.name(), c != null ? c.id() : -1,
                    run != null ? run.kernel() : "none", run != null ? run.layer() : -1,
                    run != null ? run.position() : -1, Duration.ofNanos(now - inFlightStart), inFlightDeadline,
                    args(), Duration.ofNanos(now - opened), Duration.ofNanos(inFlightIdle), fault.getMessage());
        }

        private List<Diagnostic.Arg> args() {
            List<Diagnostic.Arg> args = new ArrayList<>();
            if (inFlightStep != null) {
                for (String name : inFlightStep.buffers()) {
                    float[] buffer = forward.buffer(state, name);
                    if (buffer != null) {
                        args.add(new Diagnostic.Arg(name, 4L * buffer.length, digest(buffer)));
                    }
                }
            }
            return args;
        }

        /** Abandons the run in flight; a device whose abort throws is noted, never propagated. */
        void abort() {
            DeviceContext c = context;
            if (c == null) {
                return;
            }
            try {
                c.abort();
            } catch (RuntimeException e) {
                System.getLogger(Lane.class.getName()).log(System.Logger.Level.WARNING,
                        "device " + device.name() + ": abort of context " + c.id() + " failed: " + e.getMessage());
            }
        }

        /** Releases what references the context, then the context. */
        void end() {
            DeviceContext c = context;
            inFlight = null;
            inFlightStep = null;
            context = null;
            if (c == null) {
                return;  // a reopening after a faulted step failed
            }
            try {
                c.close();
            } catch (RuntimeException e) {
                System.getLogger(Lane.class.getName()).log(System.Logger.Level.WARNING,
                        "device " + device.name() + ": closing context " + c.id() + " failed: " + e.getMessage());
            }
        }
    }

    /** SHA-256 of the first bytes of a buffer, 8 bytes in hex. */
    static String digest(float[] buffer) {
        int n = Math.min(buffer.length, DIGEST_BYTES / 4);
        ByteBuffer bytes = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            bytes.putFloat(buffer[i]);
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes.array()), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
