package dev.laneway.runtime.serve;

import dev.laneway.runtime.cli.ExitCodes;
import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Loads the configured model behind the already bound HTTP port and holds it while the server runs. Until the model
 * is ready, health says {@code loading}; a model that cannot be served stops the process with a one-line reason.
 *
 * <p>With {@code laneway.sleep-idle-seconds}, a model that no request has used for that long is closed, giving its
 * memory back, and opened again by the next request that needs it. A request holds the model awake from its first use
 * to its end ({@link #acquire}, {@link #release}); what only describes the model ({@link #description}) does not wake
 * it. A request may set how long the model stays open after it ends (Ollama's {@code keep_alive}): zero closes it as
 * soon as no request uses it, a negative time keeps it open; the last request to end decides.
 */
@ApplicationScoped
public class ModelService {
    private static final Logger LOG = Logger.getLogger(ModelService.class);

    /** Where loading stands. */
    public enum State { LOADING, READY, SLEEPING, FAILED, DRAINING }

    /** What the served model is, kept while it sleeps. */
    public record Description(String id, ModelInfo info, Optional<String> chatTemplateSource) {
    }

    @Inject
    LanewayConfig config;

    @Inject
    ModelOpener opener;

    private volatile State state = State.LOADING;
    private volatile ServedModel model;
    private volatile String failure = "";
    private volatile int exitCode = ExitCodes.OK;
    private volatile Description description;
    /** The engine steps of the model's earlier openings, which sleeping closed. */
    private volatile StepCounts slept = StepCounts.NONE;
    /** Requests holding the model awake; guarded by this. */
    private int users;
    /** When the last of them ended (System.nanoTime()); guarded by this. */
    private long idleSince;
    /** How long the model stays open once idle, as the last request to end asked; null: the server's setting. */
    private Duration keepAlive;
    private ScheduledExecutorService sleeper;
    private final AtomicLong sleeps = new AtomicLong();
    private final AtomicLong wakes = new AtomicLong();

    void onStart(@Observes StartupEvent event) {
        if (config.model().isEmpty()) {
            fail(ExitCodes.USAGE, "no model to serve: set laneway.model (LANEWAY_MODEL) or pass -m");
            return;
        }
        Thread loader = new Thread(this::load, "laneway-model-loader");
        loader.setDaemon(true);
        loader.start();
        if (config.sleepIdleSeconds().isPresent() && config.sleepIdleSeconds().get() < 1) {
            fail(ExitCodes.USAGE, "laneway.sleep-idle-seconds must be at least 1, was "
                    + config.sleepIdleSeconds().get());
            return;
        }
        sleeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "laneway-model-sleeper");
            t.setDaemon(true);
            return t;
        });
        long period = config.sleepIdleSeconds().map(seconds -> Math.min(250, seconds * 1000L / 4)).orElse(250L);
        sleeper.scheduleWithFixedDelay(this::sleepIfIdle, period, period, TimeUnit.MILLISECONDS);
    }

    /** The server is stopping: readiness goes down at once, so that load balancers send nothing more. */
    public void draining() {
        state = State.DRAINING;
        LOG.info("stopping: readiness is down and new requests are refused");
    }

    void onStop(@Observes ShutdownEvent event) {
        if (sleeper != null) {
            sleeper.shutdownNow();
        }
        ServedModel m = model;
        model = null;
        if (m != null) {
            m.close();
        }
    }

    private void load() {
        try {
            ServedModel opened = opener.open();
            if (config.contextShift() && !opened.shiftsContext()) {
                opened.close();
                fail(ExitCodes.USAGE, "cannot serve " + config.model().get() + " with --context-shift: this model's"
                        + " forward cannot shift its context (sliding-window layers, or a route without it)");
                return;
            }
            ready(opened);
            warmChat(opened);
        } catch (DispatchException e) {
            fail(ExitCodes.USAGE, e.getMessage());
        } catch (Exception | LinkageError e) {
            fail(ExitCodes.FAILED, "cannot serve " + config.model().get() + ": " + e.getMessage());
        }
    }

    private synchronized void ready(ServedModel opened) {
        description = new Description(opened.id(), opened.info(), opened.chatTemplateSource());
        model = opened;
        idleSince = System.nanoTime();
        if (state == State.LOADING) {
            state = State.READY;
        }
        LOG.infof("model '%s' ready on %s", opened.id(), opened.info().device());
    }

    /**
     * The model for a request that has begun to use it, opened again first if it sleeps; it stays awake until the
     * request calls {@link #release}. Empty when there is no model to use: see {@link #state} (and
     * {@link #failure}, when opening it again failed).
     */
    public synchronized Optional<ServedModel> acquire() {
        if (state == State.SLEEPING) {
            wake();
        }
        if (state != State.READY || model == null) {
            return Optional.empty();
        }
        users++;
        return Optional.of(model);
    }

    /** A user that {@link #acquire acquired} the model has ended, leaving the keep-alive as it was. */
    public synchronized void release() {
        if (--users == 0) {
            idleSince = System.nanoTime();
            sleepIfIdle();
        }
    }

    /**
     * A request that {@link #acquire acquired} the model has ended, asking that the model stay open for
     * {@code keepAlive} once idle (negative: until the server stops); empty: as the server was started.
     */
    public synchronized void release(Optional<Duration> keepAlive) {
        this.keepAlive = keepAlive.orElse(null);
        release();
    }

    /**
     * Ollama's unloading request: the model closes now if no request uses it, or else when the last one ends (unless a
     * later request asks otherwise).
     */
    public synchronized void unload() {
        keepAlive = Duration.ZERO;
        sleepIfIdle();
    }

    private void wake() {
        long start = System.nanoTime();
        try {
            ServedModel opened = opener.open();
            if (state != State.SLEEPING) {
                opened.close();  // the server began to stop meanwhile
                return;
            }
            state = State.READY;
            ready(opened);
            failure = "";
            wakes.incrementAndGet();
            LOG.infof("model '%s' woke in %d ms", opened.id(), (System.nanoTime() - start) / 1_000_000);
        } catch (Exception | LinkageError e) {
            failure = "opening the model again failed: " + e.getMessage();
            LOG.error(failure);
        }
    }

    /**
     * When the open model will close if no request comes: empty while it is never to close. A model in use is
     * given its keep-alive from now.
     */
    public synchronized Optional<java.time.Instant> expiresAt() {
        Duration limit = idleLimit();
        if (limit.isNegative()) {
            return Optional.empty();
        }
        long idle = users > 0 ? 0 : System.nanoTime() - idleSince;
        return Optional.of(java.time.Instant.now().plusNanos(Math.max(0, limit.toNanos() - idle)));
    }

    /** How long the model stays open once idle; negative: until the server stops. */
    private Duration idleLimit() {
        return keepAlive != null ? keepAlive
                : config.sleepIdleSeconds().map(Duration::ofSeconds).orElse(Duration.ofSeconds(-1));
    }

    /** Closes the model when no request has used it for as long as it is to be kept open. */
    private synchronized void sleepIfIdle() {
        Duration limit = idleLimit();
        if (limit.isNegative() || state != State.READY || users > 0
                || System.nanoTime() - idleSince < limit.toNanos()) {
            return;
        }
        ServedModel m = model;
        slept = slept.plus(m.steps());
        model = null;
        state = State.SLEEPING;
        m.close();
        sleeps.incrementAndGet();
        LOG.infof("model '%s' sleeps after %d ms idle: closed, its memory given back until a request needs it",
                m.id(), limit.toMillis());
    }

    /**
     * Renders a one-message conversation once, so that the first chat request does not wait for the template engine
     * to load. A template that refuses this conversation is no error: requests get its answer themselves.
     */
    private static void warmChat(ServedModel m) {
        try {
            m.renderChat(List.of(new ChatMessage("user", "Hello")), true);
        } catch (RuntimeException e) {
            LOG.debugf("warming the chat template: %s", e.getMessage());
        }
    }

    private void fail(int code, String reason) {
        failure = reason;
        state = State.FAILED;
        exitCode = code;
        LOG.error(reason);
        Quarkus.asyncExit(code);
    }

    public State state() {
        return state;
    }

    /** The model, while it is ready and awake. */
    public Optional<ServedModel> model() {
        return Optional.ofNullable(model);
    }

    /** What the model is, once it has been ready, asleep or awake. */
    public Optional<Description> description() {
        return Optional.ofNullable(description);
    }

    /** How many times the model has gone to sleep. */
    public long sleeps() {
        return sleeps.get();
    }

    /** How many times a request has opened the sleeping model again. */
    public long wakes() {
        return wakes.get();
    }

    /** The engine steps the model has run, over all its openings. */
    public StepCounts steps() {
        ServedModel m = model;
        return m == null ? slept : slept.plus(m.steps());
    }

    /** Why loading failed; empty otherwise. */
    public String failure() {
        return failure;
    }

    public int exitCode() {
        return exitCode;
    }

    /** Facts for the readiness check. */
    public Map<String, String> readinessData() {
        Map<String, String> data = new LinkedHashMap<>();
        data.put("state", state.name().toLowerCase(java.util.Locale.ROOT));
        Description d = description;
        if (d != null) {
            data.put("model", d.id());
            data.put("route", d.info().route());
            data.put("device", d.info().device());
        }
        return data;
    }
}
