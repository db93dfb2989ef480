package dev.laneway.runtime.serve;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.time.Duration;
import java.util.Map;

/**
 * llama-server's {@code GET /health}: 503 {@code loading} until the model is ready, then 200 {@code ok}, and 503
 * {@code shutting_down} once the server is stopping. While a
 * ready model still does work it serves without ({@link dev.laneway.spi.ServedModel#awaitBackgroundWork}: copies of
 * its weights that read faster, made on idle cores), the body also says {@code "background_work": "pending"}, so
 * that a benchmark can wait for the speed the model will keep.
 */
@Path("/")
public class HealthResource {

    @Inject
    ModelService models;

    /** The same at {@code /v1/health}, where llama-server answers it too. */
    @GET
    @Path("v1/health")
    @Produces(MediaType.APPLICATION_JSON)
    public Response v1Health() {
        return health();
    }

    @GET
    @Path("health")
    @Produces(MediaType.APPLICATION_JSON)
    public Response health() {
        return switch (models.state()) {
            case READY -> Response.ok(backgroundWorkPending()
                    ? Map.of("status", "ok", "background_work", "pending") : Map.of("status", "ok")).build();
            case LOADING -> Response.status(503).entity(Map.of("status", "loading")).build();
            case FAILED -> Response.status(503).entity(Map.of("status", "error")).build();
            case DRAINING -> Response.status(503).header("Retry-After", "5")
                    .entity(Map.of("status", "shutting_down")).build();
        };
    }

    private boolean backgroundWorkPending() {
        return models.models().stream().flatMap(m -> m.model().stream())
                .anyMatch(m -> !m.awaitBackgroundWork(Duration.ZERO));
    }
}
