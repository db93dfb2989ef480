package dev.laneway.engine.lane;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.DeviceFault;
import dev.laneway.spi.device.KernelRun;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device that wraps another and injects the faults accelerators show in the field (see {@link ChaosConfig}):
 * contexts that time out after sitting idle and then leave the device stuck, runs that time out under concurrent
 * load or at random, init runs that never complete, and aborts that throw. Used by the test suite, and by operators
 * for chaos testing as {@code --device chaos:cpu?p=0.05&seed=1}; never a default.
 *
 * <p>Time comes from a {@link Clock}, so tests simulate idle time instead of sleeping. A timeout is reported at once,
 * as if the run had waited out its deadline.
 */
public final class ChaosDevice implements Device {
    private final String name;
    private final Device inner;
    private final Clock clock;
    private final AtomicInteger live = new AtomicInteger();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicInteger hanging = new AtomicInteger();
    private final SplittableRandom random;
    private final Set<String> fired = new HashSet<>();
    private volatile ChaosConfig config;
    private volatile long stuckUntil = Long.MIN_VALUE;

    public ChaosDevice(String name, Device inner, ChaosConfig config, Clock clock) {
        this.name = name;
        this.inner = inner;
        this.config = config;
        this.clock = clock;
        this.random = new SplittableRandom(config.seed());
    }

    /** Changes the faults injected from now on (tests switch load on and off). */
    public void reconfigure(ChaosConfig config) {
        this.config = config;
    }

    /** Contexts open right now. */
    @Override
    public int liveContexts() {
        return live.get();
    }

    /** Runs hanging right now, waiting to be aborted. */
    public int hanging() {
        return hanging.get();
    }

    /** Contexts opened so far. */
    public long openedContexts() {
        return opened.get();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String kind() {
        return inner.kind();
    }

    @Override
    public int maxContexts() {
        return config.exclusive() ? 1 : inner.maxContexts();
    }

    @Override
    public DeviceContext open(Duration timeout) {
        DeviceContext context = inner.open(timeout);
        live.incrementAndGet();
        opened.incrementAndGet();
        return new ChaosContext(context);
    }

    private boolean draw(double p) {
        synchronized (random) {
            return random.nextDouble() < p;
        }
    }

    private boolean fireOnce(String key) {
        synchronized (fired) {
            return fired.add(key);
        }
    }

    private DeviceFault timeout(String why) {
        return new DeviceFault(name, DeviceFault.Kind.TIMEOUT, why);
    }

    /** A context of the wrapped device with faults injected into its runs. */
    private final class ChaosContext implements DeviceContext {
        private final DeviceContext inner;
        private long lastUsed = clock.nanoTime();
        private boolean closed;
        private final java.util.concurrent.CountDownLatch aborted = new java.util.concurrent.CountDownLatch(1);

        ChaosContext(DeviceContext inner) {
            this.inner = inner;
        }

        @Override
        public long id() {
            return inner.id();
        }

        @Override
        public void run(KernelRun run, Duration deadline) {
            ChaosConfig c = config;
            long now = clock.nanoTime();
            if (now < stuckUntil) {
                throw timeout("the device is stuck after an idle-context timeout; the run waited out its deadline of "
                        + deadline.toMillis() + " ms");
            }
            Duration idle = Duration.ofNanos(now - lastUsed);
            if (!c.idleTimeout().isZero() && idle.compareTo(c.idleTimeout()) > 0) {
                stuckUntil = now + c.stuckFor().toNanos();
                throw timeout("context " + id() + " sat idle for " + idle.toMillis() + " ms (more than "
                        + c.idleTimeout().toMillis() + " ms) and timed out its next run");
            }
            if (c.loadTimeouts() && live.get() > 1) {
                throw timeout("the device stopped answering under concurrent load (" + live.get() + " live contexts)");
            }
            if (c.initHangs() && run.kernel().equals(Lane.INIT_KERNEL)) {
                throw timeout("the init run did not complete within " + deadline.toMillis() + " ms");
            }
            String at = run.position() + ":" + run.layer();
            if (c.failAt().contains(at) && fireOnce(at)) {
                throw timeout("injected timeout at position " + run.position() + ", layer " + run.layer());
            }
            if (c.hangAt().contains(at) && fireOnce("hang " + at)) {
                hang(run, deadline);
            }
            if (c.faultProbability() > 0 && draw(c.faultProbability())) {
                throw timeout("injected random timeout (p=" + c.faultProbability() + ")");
            }
            inner.run(run, deadline);
            lastUsed = clock.nanoTime();
        }

        /** Stops answering until the context is aborted, or at most until the deadline in real time. */
        private void hang(KernelRun run, Duration deadline) {
            hanging.incrementAndGet();
            try {
                boolean wasAborted = aborted.await(deadline.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
                throw timeout("the run at position " + run.position() + ", layer " + run.layer() + " hung"
                        + (wasAborted ? " until its context was aborted" : " past its deadline"));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw timeout("interrupted while hung");
            } finally {
                hanging.decrementAndGet();
            }
        }

        @Override
        public void abort() {
            aborted.countDown();
            if (config.abortThrows()) {
                throw new IllegalStateException("abort failed: the device did not acknowledge it");
            }
            inner.abort();
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                live.decrementAndGet();
                inner.close();
            }
        }
    }
}
