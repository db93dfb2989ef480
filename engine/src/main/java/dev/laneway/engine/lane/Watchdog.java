package dev.laneway.engine.lane;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Fails generations that make no progress: a lane whose generation has not finished a kernel run for longer than the
 * limit has its context aborted and the generation ends with a device fault. Checks run once a second on a daemon
 * thread; tests call {@link #check()} after moving their clock.
 */
public final class Watchdog implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Watchdog.class.getName());

    private final List<Lane> lanes;
    private final Duration limit;
    private final Clock clock;
    private ScheduledExecutorService timer;

    public Watchdog(List<Lane> lanes, Duration limit, Clock clock) {
        this.lanes = List.copyOf(lanes);
        this.limit = limit;
        this.clock = clock;
    }

    /** Starts checking once a second. */
    public Watchdog start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "laneway-watchdog");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::check, 1, 1, TimeUnit.SECONDS);
        return this;
    }

    /** Fails every generation stalled for longer than the limit; returns how many. */
    public int check() {
        long now = clock.nanoTime();
        int failed = 0;
        for (Lane lane : lanes) {
            long idle = now - lane.lastProgress();
            if (lane.busy() && idle > limit.toNanos()) {
                String reason = "no progress for " + Duration.ofNanos(idle).toMillis() + " ms (limit "
                        + limit.toSeconds() + " s)";
                LOG.log(System.Logger.Level.WARNING, "device " + lane.device().name() + ": " + reason
                        + "; failing the generation and dropping its context");
                lane.stall(reason);
                failed++;
            }
        }
        return failed;
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
