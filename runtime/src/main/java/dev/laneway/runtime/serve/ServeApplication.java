package dev.laneway.runtime.serve;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import jakarta.inject.Inject;

/** The running server: the HTTP port is bound, the model loads behind it, and it runs until told to stop. */
public class ServeApplication implements QuarkusApplication {

    @Inject
    ModelService models;

    @Override
    public int run(String... args) {
        Quarkus.waitForExit();
        return models.exitCode();
    }
}
