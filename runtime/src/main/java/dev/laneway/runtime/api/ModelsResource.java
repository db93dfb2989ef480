package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@code GET /v1/models}: the served model under its id, with the route and device serving it. */
@Path("/v1/models")
@Produces(MediaType.APPLICATION_JSON)
public class ModelsResource {
    private static final long STARTED = ManagementFactory.getRuntimeMXBean().getStartTime() / 1000;

    @Inject
    GenerationService service;

    @GET
    public ModelList list() {
        return new ModelList("list", List.of(ModelCard.of(service.readyModel())));
    }

    @GET
    @Path("/{id: .+}")
    public ModelCard get(@PathParam("id") String id) {
        return ModelCard.of(service.modelFor(Optional.of(id)));
    }

    public record ModelList(String object, List<ModelCard> data) {
    }

    /** OpenAI's model object, plus what serves it. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ModelCard(String id, String object, long created, String ownedBy, String route, String device,
                            String architecture, int contextLength, int vocabSize, Map<String, String> metadata) {
        static ModelCard of(ServedModel model) {
            ModelInfo info = model.info();
            return new ModelCard(model.id(), "model", STARTED, "laneway", info.route(), info.device(),
                    info.architecture(), info.contextLength(), info.vocabSize(), info.metadata());
        }
    }
}
