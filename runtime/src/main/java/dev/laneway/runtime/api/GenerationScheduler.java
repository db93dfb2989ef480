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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Owns the generation slots: {@code laneway.streams} threads, one generation each, fed from a bounded queue of
 * {@code laneway.queue.max} requests. HTTP threads only submit jobs and read their replies; a job that finds no slot
 * and no room in the queue is refused at once, so the client can retry elsewhere or later.
 */
@ApplicationScoped
public class GenerationScheduler {
    private static final Logger LOG = Logger.getLogger(GenerationScheduler.class);

    @Inject
    LanewayConfig config;

    private final Set<GenerationJob> jobs = ConcurrentHashMap.newKeySet();
    private final AtomicInteger running = new AtomicInteger();
    private ThreadPoolExecutor slots;
    private Semaphore admitted;
    private int streams;
    private int queueMax;

    @PostConstruct
    void start() {
        start(config.streams(), config.queue().max());
    }

    /** Opens {@code streams} slots and a queue of {@code queueMax} places. */
    void start(int streams, int queueMax) {
        if (streams < 1 || queueMax < 0) {
            throw new IllegalStateException("laneway.streams must be at least 1 and laneway.queue.max at least 0, were "
                    + streams + " and " + queueMax);
        }
        this.streams = streams;
        this.queueMax = queueMax;
        // Admission is counted here, not by the executor's queue: a burst must not be refused while slots are idle
        // only because their threads have not yet taken the jobs queued for them.
        admitted = new Semaphore(streams + queueMax);
        slots = new ThreadPoolExecutor(streams, streams, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                threads());
        slots.prestartAllCoreThreads();
    }

    /** Ends running generations at their next step before the model is closed. */
    void onStop(@Observes @Priority(1) ShutdownEvent event) {
        stop();
    }

    void stop() {
        jobs.forEach(GenerationJob::cancel);
        slots.shutdownNow();
        try {
            if (!slots.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("generations still running at shutdown");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Queues a job for the next free slot.
     *
     * @throws ApiException 503 when every slot is busy and the queue is full
     */
    void submit(GenerationJob job) {
        if (!admitted.tryAcquire()) {
            throw ApiException.overloaded("all " + streams + " streams are busy and " + queueMax
                    + " requests are already waiting; retry later");
        }
        jobs.add(job);
        try {
            slots.execute(() -> run(job));
        } catch (RejectedExecutionException e) {
            jobs.remove(job);
            admitted.release();
            throw ApiException.notReady("the server is shutting down");
        }
    }

    private void run(GenerationJob job) {
        running.incrementAndGet();
        try {
            if (!job.cancelled()) {
                job.run();
            }
        } finally {
            running.decrementAndGet();
            jobs.remove(job);
            admitted.release();
        }
    }

    /** Stops a job: a queued one never starts, a running one stops at its next token. */
    void cancel(GenerationJob job) {
        job.cancel();
    }

    /** Requests waiting for a slot. */
    public int queued() {
        return slots.getQueue().size();
    }

    /** Generations running now. */
    public int running() {
        return running.get();
    }

    private static ThreadFactory threads() {
        AtomicInteger n = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "laneway-stream-" + n.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
