package dev.laneway.engine.testing;

import dev.laneway.engine.lane.Clock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test says so: simulated idle time, never slept. */
public final class ManualClock implements Clock {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    @Override
    public long nanoTime() {
        return now.get();
    }

    public void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
