package dev.laneway.engine.lane;

import java.time.Duration;

/**
 * The bounds of a lane's device waits.
 *
 * @param open how long to wait for a context
 * @param init the init run's deadline
 * @param run  every other run's deadline
 */
public record LaneTimeouts(Duration open, Duration init, Duration run) {
    /** Bounds that suit the host and the accelerators seen so far. */
    public static final LaneTimeouts DEFAULT = new LaneTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(10),
            Duration.ofSeconds(10));
}
