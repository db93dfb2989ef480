package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ModelInfo;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;

/** {@code GET /v1/models}: the served model under its id, with the route and device serving it. */
@Path("/v1/models")
@Produces(MediaType.APPLICATION_JSON)
public class ModelsResource {
    private static final long STARTED = ManagementFactory.getRuntimeMXBean().getStartTime() / 1000;

    @Inject
    GenerationService service;

    @Inject
    LanewayConfig config;

    @GET
    public ModelList list() {
        return new ModelList("list", List.of(card()));
    }

    @GET
    @Path("/{id: .+}")
    public ModelCard get(@PathParam("id") String id) {
        service.checkName(id);
        return card();
    }

    /** The served model's card; describing it does not wake it. */
    ModelCard card() {
        ModelService.Description model = service.describedModel();
        List<String> aliases = config.alias().orElse(List.of(model.id()));
        return ModelCard.of(model, aliases, config.tags().orElse(List.of()));
    }

    public record ModelList(String object, List<ModelCard> data) {
    }

    /**
     * OpenAI's model object, plus what serves it, the names requests may give it (its id first) and its tags, as
     * llama-server lists them.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ModelCard(String id, String object, long created, String ownedBy, List<String> aliases,
                            List<String> tags, String route, String device, String architecture, int contextLength,
                            int vocabSize, Map<String, String> metadata) {
        static ModelCard of(ModelService.Description model, List<String> aliases, List<String> tags) {
            ModelInfo info = model.info();
            return new ModelCard(model.id(), "model", STARTED, "laneway", aliases, tags, info.route(), info.device(),
                    info.architecture(), info.contextLength(), info.vocabSize(), info.metadata());
        }
    }
}
