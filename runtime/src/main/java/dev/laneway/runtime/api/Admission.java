package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.LanewayConfig;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * The server's one admission gate: {@code laneway.streams} requests generating and {@code laneway.queue.max} more
 * waiting, at most; one more is refused at once (503 with {@code Retry-After}), so that the client can retry elsewhere
 * or later. An admitted request goes straight from the HTTP thread to the served model's engine loop, whose line it
 * waits in for a free stream; the request leaves the gate when its generations have ended.
 */
@ApplicationScoped
public class Admission {
    private static final Logger LOG = Logger.getLogger(Admission.class);

    @Inject
    LanewayConfig config;

    /** What the gate admits: work on the served model that can be asked to stop, and says when it has ended. */
    interface Job {
        /** Hands the work to the model and returns; {@code onEnd} runs once it has ended, whatever the outcome. */
        void start(Runnable onEnd);

        /** Asks the work to stop: waiting work never starts, running work stops at the model's next step. */
        void cancel();
    }

    private final Set<Job> jobs = ConcurrentHashMap.newKeySet();
    private Semaphore admitted;
    private int streams;
    private int queueMax;
    private volatile boolean stopping;

    @PostConstruct
    void start() {
        start(config.streams(), config.queue().max());
    }

    /** Admits {@code streams} requests and {@code queueMax} more that wait. */
    void start(int streams, int queueMax) {
        if (streams < 1 || queueMax < 0) {
            throw new IllegalStateException("laneway.streams must be at least 1 and laneway.queue.max at least 0, were "
                    + streams + " and " + queueMax);
        }
        this.streams = streams;
        this.queueMax = queueMax;
        admitted = new Semaphore(streams + queueMax);
    }

    /** Ends running generations at their next step before the model is closed. */
    void onStop(@Observes @Priority(1) ShutdownEvent event) {
        stop();
    }

    void stop() {
        stopping = true;
        jobs.forEach(Job::cancel);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!jobs.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (!jobs.isEmpty()) {
            LOG.warn("generations still running at shutdown");
        }
    }

    /**
     * Admits a job and starts it on the served model.
     *
     * @throws ApiException 503 when every stream is busy and the queue is full, or the server is stopping
     */
    void submit(Job job) {
        if (!admitted.tryAcquire()) {
            throw ApiException.overloaded("all " + streams + " streams are busy and " + queueMax
                    + " requests are already waiting; retry later");
        }
        if (stopping) {
            admitted.release();
            throw ApiException.notReady("the server is shutting down");
        }
        jobs.add(job);
        job.start(() -> {
            jobs.remove(job);
            admitted.release();
        });
    }

    /** Requests admitted beyond the streams: waiting for one. */
    public int queued() {
        return Math.max(0, jobs.size() - streams);
    }

    /** Requests generating now: as many as are admitted, up to the streams. */
    public int running() {
        return Math.min(jobs.size(), streams);
    }
}
