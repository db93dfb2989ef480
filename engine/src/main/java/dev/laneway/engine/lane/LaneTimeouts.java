package dev.laneway.engine.lane;

import java.time.Duration;

/**
 * The bounds of a lane's device waits, and of its retries.
 *
 * @param open      how long to wait for a context
 * @param init      the init run's deadline
 * @param run       every other run's deadline
 * @param retries   how many times a step (or a context's opening) that the device fails runs again, each on a fresh
 *                  context, before its generations fail and the device is taken out of service ({@link Breaker})
 * @param retryTime how long a step may spend on retries: none starts after it
 * @param probe     how long a device taken out of service waits for its first probe (each failed probe doubles it,
 *                  up to {@link Breaker#MAX_BACKOFF})
 */
public record LaneTimeouts(Duration open, Duration init, Duration run, int retries, Duration retryTime,
                           Duration probe) {
    /** Bounds that suit the host and the accelerators seen so far. */
    public static final LaneTimeouts DEFAULT = new LaneTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(10),
            Duration.ofSeconds(10), 8, Duration.ofSeconds(10), Duration.ofSeconds(1));

    public LaneTimeouts {
        if (retries < 0 || retryTime.isNegative() || probe.isNegative() || probe.isZero()) {
            throw new IllegalArgumentException("retries and the retry time must not be negative, nor the probe"
                    + " backoff below 1 ns; were " + retries + ", " + retryTime + " and " + probe);
        }
    }

    /** The same bounds with another retry budget. */
    public LaneTimeouts withRetries(int retries, Duration retryTime) {
        return new LaneTimeouts(open, init, run, retries, retryTime, probe);
    }

    /** The same bounds with another first probe backoff. */
    public LaneTimeouts withProbe(Duration probe) {
        return new LaneTimeouts(open, init, run, retries, retryTime, probe);
    }
}
