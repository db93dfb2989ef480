package dev.laneway.runtime.serve;

import dev.laneway.runtime.cli.ExitCodes;
import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The models this server serves ({@link ModelCatalog}), each a {@link ManagedModel}, behind the already bound HTTP
 * port. The models to load at startup load first; until they have, health says {@code loading}, and one that cannot
 * be served stops the process with a one-line reason. The others load when a request first names them.
 *
 * <p>Loaded models share a memory budget ({@code laneway.memory-budget-mib}, their files' size) and a count
 * ({@code laneway.max-models}): a load that would pass either first unloads the least recently used idle models that
 * are not pinned, and waits (bounded) for one in use to become idle; a model that could not fit even then is refused
 * with the numbers. An idle model unloads after its keep-alive ({@code laneway.sleep-idle-seconds}, its preset's
 * {@code keep-alive}, or what its last request asked).
 */
@ApplicationScoped
public class ModelService {
    private static final Logger LOG = Logger.getLogger(ModelService.class);
    private static final long MIB = 1024 * 1024;

    /** Where the server stands. */
    public enum State { LOADING, READY, FAILED, DRAINING }

    @Inject
    LanewayConfig config;

    @Inject
    ModelOpener opener;

    private volatile List<ManagedModel> models = List.of();
    private volatile State state = State.LOADING;
    private volatile String failure = "";
    private volatile int exitCode = ExitCodes.OK;
    private volatile long budget = Long.MAX_VALUE;
    /** Models being opened, whose room {@link #makeRoom} has given them; guarded by this. */
    private final Set<ManagedModel> opening = new HashSet<>();
    private ScheduledExecutorService sleeper;
    private final AdapterCatalog adapters = new AdapterCatalog();

    void onStart(@Observes StartupEvent event) {
        if (config.sleepIdleSeconds().isPresent() && config.sleepIdleSeconds().get() < 1) {
            fail(ExitCodes.USAGE, "laneway.sleep-idle-seconds must be at least 1, was "
                    + config.sleepIdleSeconds().get());
            return;
        }
        if (config.maxModels() < 0 || config.loadWaitSeconds() < 1) {
            fail(ExitCodes.USAGE, "laneway.max-models must be at least 0 and laneway.load-wait-seconds at least 1,"
                    + " were " + config.maxModels() + " and " + config.loadWaitSeconds());
            return;
        }
        try {
            models = ModelCatalog.read(config).stream().map(spec -> new ManagedModel(spec, this)).toList();
            startupAdapters();
        } catch (IllegalArgumentException e) {
            fail(ExitCodes.USAGE, e.getMessage());
            return;
        }
        budget = config.memoryBudgetMib().map(mib -> mib * MIB).orElseGet(ModelService::physicalMemory);
        Thread loader = new Thread(this::loadAtStartup, "laneway-model-loader");
        loader.setDaemon(true);
        loader.start();
        sleeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "laneway-model-sleeper");
            t.setDaemon(true);
            return t;
        });
        long period = config.sleepIdleSeconds().map(seconds -> Math.min(250, seconds * 1000L / 4)).orElse(250L);
        sleeper.scheduleWithFixedDelay(() -> models.forEach(ManagedModel::unloadIfExpired), period, period,
                TimeUnit.MILLISECONDS);
    }

    /** {@code laneway.lora}: NAME=PATH adapters of the default model. */
    private void startupAdapters() {
        List<String> given = config.lora().orElse(List.of());
        if (given.isEmpty()) {
            return;
        }
        String base = models.isEmpty() ? null : models.get(0).id();
        for (String entry : given) {
            int eq = entry.indexOf('=');
            if (eq < 1 || eq == entry.length() - 1) {
                throw new IllegalArgumentException("laneway.lora entries are NAME=PATH (an adapter's id and its"
                        + " GGUF file or PEFT directory), was '" + entry + "'");
            }
            String name = entry.substring(0, eq).trim();
            checkAdapterName(name);
            java.nio.file.Path path = java.nio.file.Path.of(entry.substring(eq + 1).trim()).toAbsolutePath();
            if (!java.nio.file.Files.exists(path)) {
                throw new IllegalArgumentException("laneway.lora " + name + ": no such file or directory " + path);
            }
            adapters.put(new AdapterCatalog.Adapter(name, base, path));
        }
    }

    /**
     * Checks that {@code name} can be an adapter's id: not empty, and no model's or other adapter's name.
     *
     * @throws IllegalArgumentException naming the clash
     */
    public void checkAdapterName(String name) {
        if (name.isBlank() || name.length() > 256) {
            throw new IllegalArgumentException("an adapter's name must be 1 to 256 characters, was '" + name + "'");
        }
        if (find(name).isPresent() || adapters.find(name).isPresent()) {
            throw new IllegalArgumentException("'" + name + "' already names a model or an adapter");
        }
    }

    /** The LoRA adapters served, by id. */
    public AdapterCatalog adapters() {
        return adapters;
    }

    private static long physicalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Long.MAX_VALUE;
    }

    /** The server is stopping: readiness goes down at once, so that load balancers send nothing more. */
    public void draining() {
        state = State.DRAINING;
        LOG.info("stopping: readiness is down and new requests are refused");
        changed();
    }

    void onStop(@Observes ShutdownEvent event) {
        if (sleeper != null) {
            sleeper.shutdownNow();
        }
        models.forEach(ManagedModel::shutdown);
    }

    private void loadAtStartup() {
        for (ManagedModel m : models) {
            if (!m.spec().loadOnStartup()) {
                continue;
            }
            try {
                m.loadAtStartup();
            } catch (DispatchException e) {
                fail(ExitCodes.USAGE, e.getMessage());
                return;
            } catch (Exception | LinkageError e) {
                fail(ExitCodes.FAILED, "cannot serve " + m.spec().path() + ": " + e.getMessage());
                return;
            }
        }
        if (state == State.LOADING) {
            state = State.READY;
        }
    }

    /**
     * Opens a model through its route, as its spec says, and renders a chat once so that the first chat request does
     * not wait for the template engine to load.
     */
    ServedModel open(ModelSpec spec) throws Exception {
        ServedModel opened = opener.open(spec);
        for (AdapterCatalog.Adapter a : adapters.of(spec.id())) {
            try {
                opened.loadAdapter(a.name(), a.path());
            } catch (Exception e) {
                opened.close();
                throw new DispatchException("cannot serve " + spec.path() + " with its LoRA adapter " + a.name()
                        + " (" + a.path() + "): " + e.getMessage());
            }
        }
        if (config.contextShift() && !opened.shiftsContext()) {
            opened.close();
            throw new DispatchException("cannot serve " + spec.path() + " with --context-shift: this model's"
                    + " forward cannot shift its context (sliding-window layers, or a route without it)");
        }
        try {
            opened.renderChat(List.of(new ChatMessage("user", "Hello")), true);
        } catch (RuntimeException e) {
            LOG.debugf("warming the chat template: %s", e.getMessage());
        }
        return opened;
    }

    /**
     * Before {@code target} loads: unloads the least recently used idle, unpinned models until it fits the memory
     * budget and the model count, waiting until {@code deadline} (System.nanoTime()) for models in use to become idle.
     *
     * @throws ManagedModel.Unavailable when it cannot fit beside the pinned models, or no room came in time
     */
    synchronized void makeRoom(ManagedModel target, long deadline) {
        try {
            fit(target, deadline);
            opening.add(target);
        } finally {
            models.forEach(m -> {
                if (m != target) {
                    m.yieldRoom(false);
                }
            });
        }
    }

    private void fit(ManagedModel target, long deadline) {
        while (true) {
            // a model still waiting for its room holds none: two such loads must not wait for each other
            List<ManagedModel> held = models.stream().filter(m -> m != target)
                    .filter(m -> m.state() == ManagedModel.State.LOADED || opening.contains(m)).toList();
            long used = held.stream().mapToLong(ManagedModel::bytes).sum();
            int max = config.maxModels();
            if ((max == 0 || held.size() < max) && used + target.bytes() <= budget) {
                return;
            }
            List<ManagedModel> pinned = held.stream().filter(m -> m.spec().pinned()).toList();
            long pinnedBytes = pinned.stream().mapToLong(ManagedModel::bytes).sum();
            if (models.size() > 1 && (pinnedBytes + target.bytes() > budget || max > 0 && pinned.size() >= max)) {
                throw new ManagedModel.Unavailable("the model " + target.id() + " needs " + target.bytes() / MIB
                        + " MiB and cannot fit: the memory budget is " + budget / MIB + " MiB and the pinned models"
                        + " take " + pinnedBytes / MIB + " MiB" + (max > 0 ? " of at most " + max + " models" : ""),
                        false);
            }
            Optional<ManagedModel> victim = held.stream().filter(m -> !m.spec().pinned())
                    .filter(m -> m.state() == ManagedModel.State.LOADED)
                    .min(Comparator.comparingLong(ManagedModel::lastUsed));
            if (victim.isPresent() && victim.get().evict(target.id())) {
                continue;
            }
            // in use: it takes no new requests until it is unloaded, so that its use ends
            victim.ifPresent(m -> m.yieldRoom(true));
            if (held.isEmpty() || held.stream().allMatch(m -> m.spec().pinned())) {
                return;  // alone it passes the budget of a one-model server: mapped files may
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new ManagedModel.Unavailable("no room to load the model " + target.id() + ": the models"
                        + " loaded take " + used / MIB + " MiB of " + budget / MIB + " MiB and are in use; retry later",
                        false);
            }
            try {
                wait(Math.max(1, Math.min(left / 1_000_000, 250)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ManagedModel.Unavailable("interrupted while waiting for room", false);
            }
            if (stopping()) {
                throw new ManagedModel.Unavailable("the server is shutting down; retry elsewhere or later", true);
            }
        }
    }

    /** A model's load has ended, loaded or failed: it no longer holds room as one being opened. */
    synchronized void opened(ManagedModel m) {
        opening.remove(m);
        notifyAll();
    }

    /** A model became idle or unloaded: a load waiting for room looks again. */
    synchronized void changed() {
        notifyAll();
    }

    /** Whether the server is stopping. */
    boolean stopping() {
        return state == State.DRAINING;
    }

    /** How long an idle model stays loaded unless it or a request says otherwise; negative: until the server stops. */
    Duration keepAlive() {
        return config.sleepIdleSeconds().map(Duration::ofSeconds).orElse(Duration.ofSeconds(-1));
    }

    /** How long a request waits for its model to load. */
    public Duration loadWait() {
        return Duration.ofSeconds(config.loadWaitSeconds());
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

    /** Every model, the default first. */
    public List<ManagedModel> models() {
        return models;
    }

    /** The model that answers requests that name none: the first. */
    public Optional<ManagedModel> defaultModel() {
        return models.stream().findFirst();
    }

    /** The model a request names, by its id or another of its names. */
    public Optional<ManagedModel> find(String name) {
        return models.stream().filter(m -> m.spec().names().contains(name)).findFirst();
    }

    /**
     * Holds the model that serves {@code served} for work that has begun on it, as {@link ManagedModel#acquire}
     * does; empty when it is no model of this server's (it has been unloaded meanwhile, or a test's).
     */
    public Optional<ManagedModel> hold(ServedModel served) {
        for (ManagedModel m : models) {
            if (m.model().orElse(null) == served) {
                return m.holdAgain() ? Optional.of(m) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The memory budget, in bytes. */
    public long budget() {
        return budget;
    }

    /** The engine steps the models have run, over all their loads. */
    public StepCounts steps() {
        StepCounts sum = StepCounts.NONE;
        for (ManagedModel m : models) {
            sum = sum.plus(m.steps());
        }
        return sum;
    }

    /** Why the server could not start its models; empty otherwise. */
    public String failure() {
        return failure;
    }

    public int exitCode() {
        return exitCode;
    }

    /** Facts for the readiness check: the server's state and the default model. */
    public Map<String, String> readinessData() {
        Map<String, String> data = new LinkedHashMap<>();
        data.put("state", state.name().toLowerCase(java.util.Locale.ROOT));
        defaultModel().ifPresent(m -> {
            data.put("model", m.id());
            data.put("model_state", m.state().name().toLowerCase(java.util.Locale.ROOT));
            m.description().ifPresent(d -> {
                data.put("route", d.info().route());
                data.put("device", d.info().device());
            });
        });
        if (models.size() > 1) {
            data.put("models", Long.toString(models.size()));
            data.put("models_loaded", Long.toString(models.stream()
                    .filter(m -> m.state() == ManagedModel.State.LOADED).count()));
        }
        return data;
    }
}
