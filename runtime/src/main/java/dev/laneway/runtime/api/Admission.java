package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ServedModel;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * The server's admission gate, a line per model: its streams' worth of requests generating and
 * {@code laneway.queue.max} more waiting, at most; one more is refused at once (503 with {@code Retry-After}), so that
 * the client can retry elsewhere or later. An admitted request goes straight from the HTTP thread to its model's engine
 * loop, whose line it waits in for a free stream; the request leaves the gate when its generations have ended, and
 * holds its model loaded until then.
 *
 * <p>When the server is told to stop, the gate drains: readiness goes down and new requests are refused at once (503
 * with {@code Retry-After}), the admitted ones get {@code laneway.shutdown.grace-seconds} to finish, and those still
 * running then are ended with an error their clients are told; only then does the HTTP server stop.
 */
@ApplicationScoped
public class Admission {
    private static final Logger LOG = Logger.getLogger(Admission.class);

    @Inject
    LanewayConfig config;

    @Inject
    ModelService models;

    /** What the gate admits: work on a served model that can be asked to stop, and says when it has ended. */
    interface Job {
        /** The model the work runs on. */
        ServedModel model();

        /** Hands the work to the model and returns; {@code onEnd} runs once it has ended, whatever the outcome. */
        void start(Runnable onEnd);

        /** Asks the work to stop: waiting work never starts, running work stops at the model's next step. */
        void cancel();

        /** Stops the work as {@link #cancel} does, and tells its client {@code why}. */
        void end(ApiException why);

        /** The LoRA adapters the work applies, by name. */
        default List<String> adapters() {
            return List.of();
        }
    }

    /** The LoRA adapters of the requests generating now and of those waiting, by name, each once. */
    public record AdapterUse(Set<String> running, Set<String> waiting) {
    }

    /** How long ended jobs get to tell their clients. */
    private static final Duration END_WAIT = Duration.ofSeconds(5);

    /**
     * One model's line: its streams, the permits of the requests it admits (streams and queue), and those requests in
     * the order they came, the first {@code streams} of them the ones generating.
     */
    private record Line(int streams, Semaphore admitted, Set<Job> jobs) {
        int queued() {
            return Math.max(0, jobs.size() - streams);
        }

        int running() {
            return Math.min(jobs.size(), streams);
        }
    }

    private final Set<Job> jobs = ConcurrentHashMap.newKeySet();
    private final Map<String, Line> lines = new ConcurrentHashMap<>();
    private int streams;
    private int queueMax;
    private volatile boolean stopping;

    @PostConstruct
    void start() {
        start(config.streams(), config.queue().max());
    }

    /** Admits, per model, {@code streams} requests (unless the model has its own) and {@code queueMax} more. */
    void start(int streams, int queueMax) {
        if (streams < 1 || queueMax < 0) {
            throw new IllegalStateException("laneway.streams must be at least 1 and laneway.queue.max at least 0, were "
                    + streams + " and " + queueMax);
        }
        this.streams = streams;
        this.queueMax = queueMax;
    }

    /**
     * The server has been told to stop (the first phase of Quarkus' shutdown, {@code quarkus.shutdown.delay-enabled}):
     * drains before the HTTP server stops taking connections.
     */
    void onStopping(@Observes ShutdownDelayInitiatedEvent event) {
        models.draining();
        drain(Duration.ofSeconds(config.shutdown().graceSeconds()));
    }

    /** Ends whatever still runs at its next step before the model is closed. */
    void onStop(@Observes @Priority(1) ShutdownEvent event) {
        stop();
    }

    void stop() {
        stopping = true;
        jobs.forEach(Job::cancel);
        if (!awaitJobs(END_WAIT)) {
            LOG.warn("generations still running at shutdown");
        }
    }

    /**
     * Refuses new requests, gives the admitted ones {@code grace} to finish, then ends those left with an error for
     * their clients and waits (bounded) for them to be told.
     */
    void drain(Duration grace) {
        stopping = true;
        if (jobs.isEmpty()) {
            return;
        }
        LOG.infof("stopping: %d requests admitted get up to %d s to finish", jobs.size(), grace.toSeconds());
        if (awaitJobs(grace)) {
            return;
        }
        LOG.warnf("stopping: %d requests still running after %d s are ended", jobs.size(), grace.toSeconds());
        ApiException why = ApiException.shuttingDown("the server is shutting down and ended this request after its"
                + " grace period of " + grace.toSeconds() + " s; retry elsewhere or later");
        jobs.forEach(job -> job.end(why));
        if (!awaitJobs(END_WAIT)) {
            LOG.warn("stopping: requests still running after being ended");
        }
    }

    /** Waits up to {@code bound} for every admitted job to end; whether they have. */
    private boolean awaitJobs(Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!jobs.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return jobs.isEmpty();
    }

    /**
     * Admits a job and starts it on the served model.
     *
     * @throws ApiException 503 when every stream is busy and the queue is full, or the server is stopping
     */
    void submit(Job job) {
        if (stopping) {
            throw ApiException.shuttingDown("the server is shutting down; retry elsewhere or later");
        }
        // held until the job ends, which may be after its HTTP request has (a client that went away)
        Optional<ManagedModel> held = models.hold(job.model());
        Line line = lines.computeIfAbsent(held.map(ManagedModel::id).orElse(""), id -> {
            int n = held.map(m -> m.spec().options().streams()).orElse(streams);
            return new Line(n, new Semaphore(n + queueMax), java.util.Collections.synchronizedSet(
                    new java.util.LinkedHashSet<>()));
        });
        if (!line.admitted().tryAcquire()) {
            held.ifPresent(ManagedModel::release);
            throw ApiException.overloaded("all " + line.streams() + " streams" + held.map(m -> " of " + m.id())
                    .orElse("") + " are busy and " + queueMax + " requests are already waiting; retry later");
        }
        if (stopping) {
            line.admitted().release();
            held.ifPresent(ManagedModel::release);
            throw ApiException.shuttingDown("the server is shutting down; retry elsewhere or later");
        }
        jobs.add(job);
        line.jobs().add(job);
        job.start(() -> {
            jobs.remove(job);
            line.jobs().remove(job);
            line.admitted().release();
            held.ifPresent(ManagedModel::release);
        });
    }

    /**
     * The adapters of the requests generating and waiting, over every model: of each line's requests, the first as
     * many as it has streams are generating (streams are taken in the order requests come).
     */
    public AdapterUse adapterUse() {
        Set<String> running = new java.util.TreeSet<>();
        Set<String> waiting = new java.util.TreeSet<>();
        for (Line line : lines.values()) {
            List<Job> inOrder;
            synchronized (line.jobs()) {
                inOrder = List.copyOf(line.jobs());
            }
            for (int i = 0; i < inOrder.size(); i++) {
                (i < line.streams() ? running : waiting).addAll(inOrder.get(i).adapters());
            }
        }
        return new AdapterUse(running, waiting);
    }

    /** Requests admitted beyond the streams: waiting for one, over every model. */
    public int queued() {
        return lines.values().stream().mapToInt(Line::queued).sum();
    }

    /** Requests generating now: as many as are admitted, up to the streams, over every model. */
    public int running() {
        return lines.values().stream().mapToInt(Line::running).sum();
    }

    /** Requests of model {@code id} waiting for a stream. */
    public int queued(String id) {
        Line line = lines.get(id);
        return line == null ? 0 : line.queued();
    }

    /** Requests of model {@code id} generating now. */
    public int running(String id) {
        Line line = lines.get(id);
        return line == null ? 0 : line.running();
    }
}
