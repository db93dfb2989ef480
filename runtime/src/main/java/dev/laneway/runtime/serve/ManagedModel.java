package dev.laneway.runtime.serve;

import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * One model's life on the server: unloaded until a request needs it, loading (the requests that need it meanwhile
 * wait, bounded), loaded while requests use it and for its keep-alive after the last, then unloaded again, its memory
 * given back. A request holds the model from its first use to its end ({@link #acquire}, {@link #release}); what
 * only describes the model ({@link #description}) does not load it.
 *
 * <p>A request may set how long the model stays loaded after it ends (Ollama's {@code keep_alive}): zero unloads it
 * as soon as no request uses it, a negative time keeps it; the last request to end decides. The server unloads an
 * idle model to make room for another ({@link ModelService}); never one in use, nor a pinned one.
 */
public final class ManagedModel {
    private static final Logger LOG = Logger.getLogger(ManagedModel.class);

    /** Where the model stands. */
    public enum State { UNLOADED, LOADING, LOADED, FAILED }

    /** What the model is, known once it has been loaded and kept after it unloads. */
    public record Description(String id, ModelInfo info, java.util.Optional<String> chatTemplateSource) {
    }

    /** Why a request cannot have the model now; the message says why, for its client. */
    public static final class Unavailable extends RuntimeException {
        /** Whether the server is stopping, rather than the model being unready. */
        public final boolean stopping;

        Unavailable(String message, boolean stopping) {
            super(message);
            this.stopping = stopping;
        }
    }

    private final ModelSpec spec;
    private final ModelService service;
    private final long bytes;
    private State state = State.UNLOADED;
    private volatile ServedModel model;
    private volatile Description description;
    private volatile String failure = "";
    /** Loads that failed; a waiting request sees that the one it waited for did. Guarded by this. */
    private long loadsFailed;
    /** The engine steps of earlier loads, which unloading closed. */
    private volatile StepCounts closedSteps = StepCounts.NONE;
    /** Requests holding the model; guarded by this. */
    private int users;
    /** When the last of them ended, or the model was last acquired (System.nanoTime()); guarded by this. */
    private long lastUsed;
    /** How long the model stays loaded once idle, as the last request to end asked; null: its spec's. */
    private Duration keepAlive;
    /** Asked to unload once idle, by hand; a request that begins meanwhile takes it back. Guarded by this. */
    private boolean unloadAsked;
    /**
     * To be unloaded for a model waiting for its room: requests that begin meanwhile wait for it to unload and load it
     * again after, so that a model in constant use cannot keep another from ever loading. Guarded by this.
     */
    private boolean yielding;
    private long loads;
    private long unloads;

    ManagedModel(ModelSpec spec, ModelService service) {
        this.spec = spec;
        this.service = service;
        this.bytes = spec.bytes();
    }

    public ModelSpec spec() {
        return spec;
    }

    public String id() {
        return spec.id();
    }

    /** What its files take: its weight in the memory budget. */
    public long bytes() {
        return bytes;
    }

    /**
     * The model for a request that begins to use it, loaded first when it is not (or waited for while another request
     * loads it, up to {@code wait}); it stays loaded until the request calls {@link #release}.
     *
     * @throws Unavailable when it cannot be loaded, did not load within {@code wait}, or the server is stopping
     */
    public ServedModel acquire(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        synchronized (this) {
            while (true) {
                if (service.stopping()) {
                    throw new Unavailable("the server is shutting down; retry elsewhere or later", true);
                }
                if (state == State.LOADED && !yielding) {
                    unloadAsked = false;
                    users++;
                    lastUsed = System.nanoTime();
                    return model;
                }
                if (state == State.FAILED) {
                    throw new Unavailable("the model " + id() + " failed to load", false);
                }
                if (state == State.UNLOADED) {
                    state = State.LOADING;
                    users++;  // this request's hold, so that nothing unloads it between its load and its use
                    break;
                }
                long failed = loadsFailed;  // loading, or yielding its room
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new Unavailable("the model " + id() + (state == State.LOADING ? " is still loading"
                            : " is unloading for another") + " after " + wait.toSeconds() + " s; retry later", false);
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new Unavailable("interrupted while the model " + id() + " loaded", false);
                }
                if (state == State.UNLOADED && loadsFailed > failed) {
                    throw new Unavailable("loading the model " + id() + " failed: " + failure, false);
                }
            }
        }
        return load(deadline);
    }

    /** Loads the model for the request that found it unloaded, which holds it once loaded. */
    private ServedModel load(long deadline) {
        long start = System.nanoTime();
        ServedModel opened;
        try {
            service.makeRoom(this, deadline);
            opened = service.open(spec);
        } catch (Unavailable e) {
            loadFailed(e.getMessage());
            throw e;
        } catch (Exception | LinkageError e) {
            loadFailed(e.getMessage());
            throw new Unavailable("loading the model " + id() + " failed: " + e.getMessage(), false);
        }
        loaded(opened);
        service.opened(this);
        LOG.infof("model '%s' loaded on %s in %d ms", id(), opened.info().device(),
                (System.nanoTime() - start) / 1_000_000);
        return opened;
    }

    private void loadFailed(String why) {
        synchronized (this) {
            failure = why == null ? "" : why;
            state = State.UNLOADED;
            users--;
            loadsFailed++;
            notifyAll();
        }
        service.opened(this);
        LOG.errorf("model '%s' did not load: %s", id(), why);
    }

    /**
     * Loads the model when the server starts: a failure is the server's ({@link State#FAILED}).
     *
     * @throws Exception why it could not be loaded
     */
    void loadAtStartup() throws Exception {
        synchronized (this) {
            state = State.LOADING;
        }
        ServedModel opened;
        try {
            opened = service.open(spec);
        } catch (Exception | LinkageError e) {
            synchronized (this) {
                state = State.FAILED;
                failure = String.valueOf(e.getMessage());
                notifyAll();
            }
            throw e;
        }
        loaded(opened);
        LOG.infof("model '%s' ready on %s", id(), opened.info().device());
    }

    /** The model is open: requests waiting for it may use it. */
    private synchronized void loaded(ServedModel opened) {
        description = new Description(opened.id(), opened.info(), opened.chatTemplateSource());
        model = opened;
        state = State.LOADED;
        failure = "";
        loads++;
        lastUsed = System.nanoTime();
        notifyAll();
    }

    /**
     * One more hold on the model for work that a request holding it has begun (its generation, which may outlive the
     * request); false when it is not loaded.
     */
    synchronized boolean holdAgain() {
        if (state != State.LOADED) {
            return false;
        }
        users++;
        return true;
    }

    /** Marks the model to be unloaded for another once idle (see {@link #yielding}), or takes the mark back. */
    synchronized void yieldRoom(boolean yield) {
        if (yielding != yield) {
            yielding = yield && state == State.LOADED;
            notifyAll();
        }
    }

    /** A request that {@link #acquire acquired} the model has ended, leaving the keep-alive as it was. */
    public void release() {
        boolean idle;
        synchronized (this) {
            idle = --users == 0;
            lastUsed = System.nanoTime();
        }
        if (idle) {
            unloadIfExpired();
            service.changed();
        }
    }

    /**
     * A request that {@link #acquire acquired} the model has ended, asking that it stay loaded for {@code keepAlive}
     * once idle (negative: until the server stops); empty: as its spec and the server say.
     */
    public void release(Optional<Duration> keepAlive) {
        synchronized (this) {
            this.keepAlive = keepAlive.orElse(null);
        }
        release();
    }

    /**
     * Unloads the model now if no request uses it, or else when the last one ends (unless another request begins
     * meanwhile): Ollama's unloading request, and {@code POST /models/unload}.
     */
    public void unload() {
        synchronized (this) {
            unloadAsked = true;
        }
        unloadIfExpired();
        service.changed();
    }

    /** Unloads the model if it is loaded and idle, to make room for another; whether it did. */
    boolean evict(String forWhom) {
        return close("unloaded to make room for '" + forWhom + "'", true);
    }

    /** Unloads the model when no request has used it for as long as it is to stay loaded. */
    void unloadIfExpired() {
        close(null, false);
    }

    /** Closes the loaded, idle model: always when evicting, else when its keep-alive has run out. */
    private boolean close(String evictedWhy, boolean evicting) {
        ServedModel m;
        String why;
        synchronized (this) {
            Duration limit = idleLimit();
            if (state != State.LOADED || users > 0) {
                return false;
            }
            if (evicting) {
                why = evictedWhy;
            } else if (unloadAsked) {
                why = "unloaded as asked";
            } else if (limit.isNegative() || System.nanoTime() - lastUsed < limit.toNanos()) {
                return false;
            } else {
                why = "unloaded after " + limit.toMillis() + " ms idle";
            }
            m = model;
            closedSteps = closedSteps.plus(m.steps());
            model = null;
            state = State.UNLOADED;
            unloadAsked = false;
            yielding = false;
            unloads++;
            notifyAll();
        }
        m.close();
        // What the model held on the heap, and the native memory its buffers' cleaners free, goes back to the
        // system now rather than at some later collection, before another model takes its place.
        System.gc();
        LOG.infof("model '%s' %s: its memory is given back until a request needs it", id(), why);
        return true;
    }

    /** How long the model stays loaded once idle; negative: until the server stops. */
    private Duration idleLimit() {
        if (keepAlive != null) {
            return keepAlive;
        }
        if (spec.pinned()) {
            return Duration.ofSeconds(-1);
        }
        return spec.keepAlive().orElseGet(service::keepAlive);
    }

    /** When the loaded model unloads if no request comes: empty while it stays; one in use gets it from now. */
    public synchronized Optional<Instant> expiresAt() {
        Duration limit = idleLimit();
        if (limit.isNegative()) {
            return Optional.empty();
        }
        long idle = users > 0 ? 0 : System.nanoTime() - lastUsed;
        return Optional.of(Instant.now().plusNanos(Math.max(0, limit.toNanos() - idle)));
    }

    /** Closes the model as the server stops. */
    void shutdown() {
        ServedModel m;
        synchronized (this) {
            m = model;
            model = null;
            if (state == State.LOADED) {
                state = State.UNLOADED;
            }
            notifyAll();
        }
        if (m != null) {
            m.close();
        }
    }

    public synchronized State state() {
        return state;
    }

    /** When it was last used (System.nanoTime()), for choosing the least recently used. */
    synchronized long lastUsed() {
        return lastUsed;
    }

    /** The model while it is loaded. */
    public Optional<ServedModel> model() {
        return Optional.ofNullable(model);
    }

    /** What the model is, once it has been loaded. */
    public Optional<Description> description() {
        return Optional.ofNullable(description);
    }

    /** Why its last load failed; empty when it did not. */
    public String failure() {
        return failure;
    }

    /** Times it has been loaded. */
    public synchronized long loads() {
        return loads;
    }

    /** Times it has been unloaded, idle or to make room. */
    public synchronized long unloads() {
        return unloads;
    }

    /** The engine steps it has run, over all its loads. */
    public StepCounts steps() {
        ServedModel m = model;
        return m == null ? closedSteps : closedSteps.plus(m.steps());
    }
}
