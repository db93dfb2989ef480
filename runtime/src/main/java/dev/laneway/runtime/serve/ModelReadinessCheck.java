package dev.laneway.runtime.serve;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/** Ready when the model is loaded and able to serve; the data name the model, its route and device. */
@Readiness
@ApplicationScoped
public class ModelReadinessCheck implements HealthCheck {

    @Inject
    ModelService models;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder builder = HealthCheckResponse.named("model");
        models.readinessData().forEach(builder::withData);
        boolean up = models.state() == ModelService.State.READY
                && models.model().map(m -> m.health().up()).orElse(false);
        if (!up && !models.failure().isEmpty()) {
            builder.withData("error", models.failure());
        }
        return builder.status(up).build();
    }
}
