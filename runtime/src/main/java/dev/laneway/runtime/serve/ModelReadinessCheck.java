package dev.laneway.runtime.serve;

import dev.laneway.runtime.api.PublicText;
import dev.laneway.spi.ModelHealth;
import dev.laneway.spi.ServedModel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import java.util.Optional;

/**
 * Ready when the model is loaded and able to serve; the data name the model, its route and device, and no path of the
 * machine's ({@link PublicText}).
 */
@Readiness
@ApplicationScoped
public class ModelReadinessCheck implements HealthCheck {

    @Inject
    ModelService models;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder builder = HealthCheckResponse.named("model");
        models.readinessData().forEach((k, v) -> builder.withData(k, PublicText.of(v)));
        Optional<ModelHealth> health = models.defaultModel().flatMap(ManagedModel::model).map(ServedModel::health);
        health.ifPresent(h -> h.data().forEach((k, v) -> builder.withData(k, PublicText.of(v))));
        boolean up = models.state() == ModelService.State.READY && health.map(ModelHealth::up).orElse(true);
        if (!up && !models.failure().isEmpty()) {
            builder.withData("error", PublicText.of(models.failure()));
        }
        health.filter(h -> !h.up()).ifPresent(h -> builder.withData("reason", PublicText.of(h.reason())));
        return builder.status(up).build();
    }
}
