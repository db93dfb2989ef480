package dev.laneway.engine.lane;

import dev.laneway.engine.forward.ForwardState;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.StepInfo;
import dev.laneway.engine.forward.BoundStep;
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

/**
 * A model on a device (docs/lanes.md), the device runner of its engine loop: the activations and a KV cache with a
 * slot per stream, allocated once (the weights are shared), the cache growing as positions are first reached, and the
 * forward's steps bound to them. Each busy period gets a fresh context: {@link #begin} opens and configures it (an init
 * run with its own bound, then the output-head configuration), {@link #run} runs a step's kernels on it with deadlines,
 * and {@link #end} drops it, which the loop does on every path. A device fault aborts the context with a recorded
 * diagnostic (which kernel, layer and position were in flight, for how long, digests of the argument buffers), and the
 * lane runs the step again on a fresh context, within a budget of retries and time ({@link LaneTimeouts}); a step that
 * fails its whole budget fails that step's sequences and takes the device out of service ({@link Breaker}) until a
 * probe passes. The KV cache outlives the context.
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
    /** The forward's steps bound to the state, once. */
    private final BoundStep[] steps;
    private final FaultLog faults;
    private final LaneTimeouts timeouts;
    private final Clock clock;
    private final Breaker breaker;
    private volatile long lastProgress;
    /** The busy period's context; null while the lane is idle. */
    private volatile DeviceContext context;
    private volatile String stalled;
    /** Whether a fault ended a context of this busy period. */
    private boolean faulted;
    private long opened;
    private long lastRunEnd;
    private KernelRun inFlight;
    private StepInfo inFlightStep;
    private long inFlightStart;
    private long inFlightIdle;
    private Duration inFlightDeadline = Duration.ZERO;
    /** Steps run, the sequences and rows in them: written by the one thread that runs steps, read by metrics. */
    private final AtomicLong stepCount = new AtomicLong();
    private final AtomicLong stepSequences = new AtomicLong();
    private final AtomicLong stepRows = new AtomicLong();

    public Lane(Device device, ContextGate gate, LaneForward forward, ForwardState state, FaultLog faults,
                LaneTimeouts timeouts, Clock clock) {
        this.device = device;
        this.gate = gate;
        this.forward = forward;
        this.state = state;
        this.steps = forward.bind(state).toArray(BoundStep[]::new);
        this.faults = faults;
        this.timeouts = timeouts;
        this.clock = clock;
        this.breaker = new Breaker(clock, timeouts.probe());
    }

    public Device device() {
        return device;
    }

    /** When the lane last made progress (a busy period began or a kernel run ended), on its clock. */
    public long lastProgress() {
        return lastProgress;
    }

    /** Whether the lane holds a context (a busy period). */
    public boolean busy() {
        return context != null;
    }

    /**
     * Fails the step in flight, if any, for want of progress: its context is aborted, and the step ends with a device
     * fault. Called by the {@link Watchdog}.
     */
    void stall(String reason) {
        if (context != null) {
            stalled = reason;
            abort();
        }
    }

    /** The activations and KV cache the lane's forward runs on: fill its batch, then {@link #run()}. */
    ForwardState state() {
        return state;
    }

    /** Floats from one row of logits to the next. */
    int logitsStride() {
        return forward.logitsStride();
    }

    /** A buffer of the forward's state, as the last step left it (hidden states, for pooling). */
    float[] buffer(String name) {
        return forward.buffer(state, name);
    }

    LaneForward forward() {
        return forward;
    }

    /**
     * Begins a busy period: waits (bounded) for the right to open a context, opens a fresh one and configures it (the
     * init run with its own bound, then the output head), again on a fresh one while the device fails that and the
     * retry budget lasts. {@link #end()} must follow, whatever happens after.
     *
     * @throws DeviceFaultException when the device fails the whole budget; the diagnostics are recorded, the device is
     *                              out of service and nothing is left open
     */
    void begin() {
        gate.acquire(device, timeouts.open());
        faulted = false;
        long firstFault = 0;
        for (int attempt = 0; ; attempt++) {
            try {
                open();
                return;
            } catch (DeviceFault fault) {
                DeviceFaultException e = failed(fault);
                firstFault = attempt == 0 ? clock.nanoTime() : firstFault;
                if (budgetSpent(attempt, firstFault)) {
                    breaker.trip("opening a context failed " + (attempt + 1) + " times in a row: " + fault.getMessage());
                    end();
                    throw e;
                }
                drop();
            }
        }
    }

    /**
     * Runs the state's batch: each step of the forward as a kernel run on the context, with its deadline. Returns the
     * logits its segments asked for, a row of {@link #logitsStride()} each. A step the device fails runs again on a
     * fresh context while the retry budget lasts (the KV cache and the batch live outside the context, and the step
     * rewrites the same positions, so its results are those of a fault-free run).
     *
     * @throws DeviceFaultException when the device fails the step the whole budget; the diagnostics are recorded, the
     *                              device is out of service and the context aborted, so the busy period must
     *                              {@link #end()}
     */
    float[] run() {
        state.prepare();
        long firstFault = 0;
        for (int attempt = 0; ; attempt++) {
            try {
                if (attempt > 0) {
                    open();
                }
                runSteps();
                if (attempt > 0) {
                    faulted = false;  // a retry made it: this busy period ends as a success
                }
                break;
            } catch (DeviceFault fault) {
                DeviceFaultException e = failed(fault);
                firstFault = attempt == 0 ? clock.nanoTime() : firstFault;
                if (budgetSpent(attempt, firstFault)) {
                    breaker.trip("a step failed " + (attempt + 1) + " times in a row: " + fault.getMessage());
                    throw e;
                }
                drop();
            }
        }
        stepCount.incrementAndGet();
        stepSequences.addAndGet(state.batch().segments());
        stepRows.addAndGet(state.batch().rows());
        return forward.logits(state);
    }

    /**
     * Whether a step (or opening) that has just failed attempt {@code attempt} may not run again: the retries are
     * used up, or their time, counted from the first fault (a first run that hung until the watchdog does not count).
     */
    private boolean budgetSpent(int attempt, long firstFault) {
        return attempt >= timeouts.retries() || clock.nanoTime() - firstFault >= timeouts.retryTime().toNanos();
    }

    /** How long until the device's next probe while it is out of service; empty while it is in service. */
    public java.util.Optional<Duration> outOfService() {
        return breaker.outOfService();
    }

    /** Why the device is out of service; empty while it is in service. */
    public String outOfServiceReason() {
        return breaker.reason();
    }

    /**
     * Probes a device that is out of service, if its probe is due: a fresh context opened and configured, then
     * dropped. One that passes puts the device back in service; one that fails keeps it out, for twice as long.
     */
    void probeIfDue() {
        if (!breaker.probeDue()) {
            return;
        }
        try {
            begin();
        } catch (DeviceFaultException stillFailing) {
            return;  // begin tripped the breaker again
        } catch (RuntimeException noContext) {
            breaker.trip("a probe could not open a context: " + noContext.getMessage());
            return;
        }
        end();
        breaker.close();
        System.getLogger(Lane.class.getName()).log(System.Logger.Level.INFO, "device " + device.name()
                + " passed a probe and is back in service");
    }

    private void runSteps() {
        int position = state.batch().firstPosition();
        for (BoundStep step : steps) {
            StepInfo info = step.info();
            runKernel(new KernelRun(info.kernel(), info.layer(), position, List.of(), step.work()), timeouts.run(), info);
        }
    }

    /** Opens a fresh context and configures it. */
    private void open() {
        lastProgress = clock.nanoTime();
        stalled = null;
        context = openContext();
        opened = clock.nanoTime();
        lastRunEnd = opened;
        runKernel(KernelRun.named(INIT_KERNEL), timeouts.init(), null);
        runKernel(KernelRun.named(HEAD_KERNEL), timeouts.run(), null);
    }

    /** Releases what references the context, then the context; the right to one is kept. */
    private void drop() {
        DeviceContext c = context;
        inFlight = null;
        inFlightStep = null;
        context = null;
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                System.getLogger(Lane.class.getName()).log(System.Logger.Level.WARNING,
                        "device " + device.name() + ": closing context " + c.id() + " failed: " + e.getMessage());
            }
        }
    }

    /** Ends the busy period: releases what references the context, then the context, then the right to one. */
    void end() {
        drop();
        if (!faulted) {
            faults.succeeded();
        }
        gate.release(device);
    }

    /** What the forward steps of this lane have run. */
    StepCounts steps() {
        return new StepCounts(stepCount.get(), stepSequences.get(), stepRows.get());
    }

    /** Opens a fresh context; a device that cannot is on record. */
    private DeviceContext openContext() {
        try {
            return device.open(timeouts.open());
        } catch (DeviceFault fault) {
            faulted = true;
            faults.record(new Diagnostic(Instant.now(), device.name(), -1, "open", -1, -1, Duration.ZERO,
                    timeouts.open(), List.of(), Duration.ZERO, Duration.ZERO, fault.getMessage()));
            throw fault;
        }
    }

    private DeviceFaultException failed(DeviceFault fault) {
        if (context != null) {
            faulted = true;
            faults.record(diagnose(fault));
            abort();
        }
        return new DeviceFaultException(device.name(), "device " + device.name() + " failed this generation: "
                + fault.getMessage(), fault);
    }

    private void runKernel(KernelRun run, Duration deadline, StepInfo info) {
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

    private Diagnostic diagnose(DeviceFault fault) {
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
    private void abort() {
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
