package dev.laneway.spi.device;

import java.time.Duration;

/**
 * A context on a device: the state kernels run in. One generation uses one context and then releases it; no context
 * outlives its generation. Not thread-safe: one thread drives a context.
 */
public interface DeviceContext extends AutoCloseable {

    /** A number that tells contexts apart in diagnostics. */
    long id();

    /**
     * Runs one kernel and waits for it, at most until {@code deadline} has passed.
     *
     * @throws DeviceFault when the run misses its deadline or the device reports an error
     */
    void run(KernelRun run, Duration deadline);

    /** Abandons whatever is in flight. May itself throw; callers catch it. */
    void abort();

    /** Releases the context. Called on every path, after everything that references it was released. */
    @Override
    void close();
}
