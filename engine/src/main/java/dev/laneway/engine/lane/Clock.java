package dev.laneway.engine.lane;

/** A monotonic clock in nanoseconds; tests drive a manual one so that idle time is simulated, never slept. */
@FunctionalInterface
public interface Clock {
    /** The system's monotonic clock. */
    Clock SYSTEM = System::nanoTime;

    long nanoTime();
}
