package dev.laneway.runtime.serve;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/** Alive unless loading the model failed for good. */
@Liveness
@ApplicationScoped
public class ServerLivenessCheck implements HealthCheck {

    @Inject
    ModelService models;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("server")
                .withData("state", models.state().name().toLowerCase(java.util.Locale.ROOT))
                .status(models.state() != ModelService.State.FAILED)
                .build();
    }
}
