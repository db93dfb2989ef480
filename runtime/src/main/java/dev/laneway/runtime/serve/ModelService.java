package dev.laneway.runtime.serve;

import dev.laneway.runtime.cli.ExitCodes;
import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.ServedModel;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Loads the configured model behind the already bound HTTP port and holds it while the server runs. Until the model
 * is ready, health says {@code loading}; a model that cannot be served stops the process with a one-line reason.
 */
@ApplicationScoped
public class ModelService {
    private static final Logger LOG = Logger.getLogger(ModelService.class);

    /** Where loading stands. */
    public enum State { LOADING, READY, FAILED, DRAINING }

    @Inject
    LanewayConfig config;

    @Inject
    ModelOpener opener;

    private volatile State state = State.LOADING;
    private volatile ServedModel model;
    private volatile String failure = "";
    private volatile int exitCode = ExitCodes.OK;

    void onStart(@Observes StartupEvent event) {
        if (config.model().isEmpty()) {
            fail(ExitCodes.USAGE, "no model to serve: set laneway.model (LANEWAY_MODEL) or pass -m");
            return;
        }
        Thread loader = new Thread(this::load, "laneway-model-loader");
        loader.setDaemon(true);
        loader.start();
    }

    /** The server is stopping: readiness goes down at once, so that load balancers send nothing more. */
    public void draining() {
        state = State.DRAINING;
        LOG.info("stopping: readiness is down and new requests are refused");
    }

    void onStop(@Observes ShutdownEvent event) {
        ServedModel m = model;
        model = null;
        if (m != null) {
            m.close();
        }
    }

    private void load() {
        try {
            ServedModel opened = opener.open();
            ready(opened);
            warmChat(opened);
        } catch (DispatchException e) {
            fail(ExitCodes.USAGE, e.getMessage());
        } catch (Exception | LinkageError e) {
            fail(ExitCodes.FAILED, "cannot serve " + config.model().get() + ": " + e.getMessage());
        }
    }

    private void ready(ServedModel opened) {
        model = opened;
        state = State.READY;
        LOG.infof("model '%s' ready on %s", opened.id(), opened.info().device());
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

    /** The model, once ready. */
    public Optional<ServedModel> model() {
        return Optional.ofNullable(model);
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
        ServedModel m = model;
        if (m != null) {
            data.put("model", m.id());
            data.put("route", m.info().route());
            data.put("device", m.info().device());
        }
        return data;
    }
}
