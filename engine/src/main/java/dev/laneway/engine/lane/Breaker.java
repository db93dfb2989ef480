package dev.laneway.engine.lane;

import java.time.Duration;
import java.util.Optional;

/**
 * Whether a lane's device is in service. A step (or a context's opening) that fails its whole retry budget trips it:
 * the device is then out of service, requests are refused at once instead of each losing its own budget on it, and
 * it is probed (a fresh context opened and configured) after a backoff that starts at the lane's first probe backoff
 * ({@link LaneTimeouts#probe}) and doubles up to {@link #MAX_BACKOFF} with each failed probe; a probe that passes puts
 * it back. Used by the engine
 * loop's thread; read by any (health, metrics).
 */
final class Breaker {
    static final Duration MAX_BACKOFF = Duration.ofSeconds(60);

    private final Clock clock;
    private final Duration first;
    private volatile boolean open;
    private volatile long nextProbe;
    private volatile String reason = "";
    private Duration backoff = Duration.ZERO;

    Breaker(Clock clock, Duration first) {
        this.clock = clock;
        this.first = first;
    }

    /** Takes the device out of service (again, after a failed probe, with twice the backoff). */
    void trip(String why) {
        backoff = backoff.isZero() ? min(first, MAX_BACKOFF) : min(backoff.multipliedBy(2), MAX_BACKOFF);
        reason = why;
        nextProbe = clock.nanoTime() + backoff.toNanos();
        open = true;
    }

    /** A probe passed: the device is back in service. */
    void close() {
        open = false;
        backoff = Duration.ZERO;
        reason = "";
    }

    /** How long until the next probe, while the device is out of service; empty while it is in service. */
    Optional<Duration> outOfService() {
        if (!open) {
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(Math.max(0, nextProbe - clock.nanoTime())));
    }

    /** Whether the device is out of service and its next probe is due. */
    boolean probeDue() {
        return open && clock.nanoTime() - nextProbe >= 0;
    }

    /** Why the device was taken out of service; empty while it is in service. */
    String reason() {
        return reason;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
