package dev.laneway.runtime.serve;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import jakarta.inject.Inject;
import sun.misc.Signal;

/**
 * The running server: the HTTP port is bound, the model loads behind it, and it runs until told to stop. SIGTERM and
 * Ctrl-C stop it gracefully (readiness goes down, new requests are refused, admitted ones get
 * {@code laneway.shutdown.grace-seconds} to finish: {@code Admission}) and the process exits 0, as an orchestrator
 * expects of a clean stop.
 */
public class ServeApplication implements QuarkusApplication {

    @Inject
    ModelService models;

    @Override
    public int run(String... args) {
        for (String name : new String[]{"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> Quarkus.asyncExit(0));
        }
        Quarkus.waitForExit();
        return models.exitCode();
    }
}
