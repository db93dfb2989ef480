package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.LanewayConfig;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Vertex AI's own predict and health routes ({@code AIP_PREDICT_ROUTE}, {@code AIP_HEALTH_ROUTE}), where they are not
 * this server's: answered as {@code /predict} and {@code /health}.
 */
@ApplicationScoped
public class VertexRoutes {

    @Inject
    LanewayConfig config;

    void install(@Observes Router router) {
        LanewayConfig.Vertex vertex = config.vertex();
        if (!vertex.enabled()) {
            return;
        }
        Map<String, String> aliases = new LinkedHashMap<>();
        if (!vertex.predictRoute().equals(PredictResource.PATH)) {
            aliases.put(vertex.predictRoute(), PredictResource.PATH);
        }
        vertex.healthRoute().filter(r -> !r.equals("/health")).ifPresent(r -> aliases.put(r, "/health"));
        if (!aliases.isEmpty()) {
            // Compared whole and decoded: Vertex AI's routes may hold ':', which a route pattern would read as a
            // parameter and a client may send as %3A.
            router.route().order(Integer.MIN_VALUE + 10).handler(ctx -> {
                String to = aliases.get(decoded(ctx.normalizedPath()));
                if (to == null) {
                    ctx.next();
                } else {
                    ctx.reroute(to);
                }
            });
        }
    }

    private static String decoded(String path) {
        try {
            return new URI(path).getPath();
        } catch (URISyntaxException e) {
            return path;
        }
    }
}
