package dev.laneway.runtime.serve;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.Map;

/** llama-server's {@code GET /health}: 503 {@code loading} until the model is ready, then 200 {@code ok}. */
@Path("/health")
public class HealthResource {

    @Inject
    ModelService models;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response health() {
        return switch (models.state()) {
            case READY -> Response.ok(Map.of("status", "ok")).build();
            case LOADING -> Response.status(503).entity(Map.of("status", "loading")).build();
            case FAILED -> Response.status(503).entity(Map.of("status", "error")).build();
        };
    }
}
