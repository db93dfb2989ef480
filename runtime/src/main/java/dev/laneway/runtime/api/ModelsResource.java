package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.AdapterCatalog;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.laneway.runtime.serve.ManagedModel;
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
import java.util.Optional;

/**
 * {@code GET /v1/models}: every model the server serves under its id, with its state (loaded, loading, unloaded) and,
 * once it has been loaded, the route and device serving it and what it is. Listing does not load a model.
 */
@Path("/v1/models")
@Produces(MediaType.APPLICATION_JSON)
public class ModelsResource {
    private static final long STARTED = ManagementFactory.getRuntimeMXBean().getStartTime() / 1000;

    @Inject
    GenerationService service;

    @Inject
    ModelService models;

    @GET
    public ModelList list() {
        service.managed();  // 503 while the server starts or stops
        List<ModelCard> cards = new java.util.ArrayList<>(models.models().stream().map(ModelCard::of).toList());
        models.adapters().all().forEach(a -> models.find(a.base()).ifPresent(base -> cards.add(ModelCard.of(a, base))));
        return new ModelList("list", cards);
    }

    @GET
    @Path("/{id: .+}")
    public ModelCard get(@PathParam("id") String id) {
        ManagedModel m = service.managed(Optional.of(id));
        return models.find(id).isEmpty() ? models.adapters().find(id).map(a -> ModelCard.of(a, m))
                .orElseGet(() -> ModelCard.of(m)) : ModelCard.of(m);
    }

    public record ModelList(String object, List<ModelCard> data) {
    }

    /** Where a model stands, as llama-server's router lists it: {@code value}, and {@code failed} after a failed load. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Status(String value, Boolean failed, String error) {
        static Status of(ManagedModel m) {
            String value = switch (m.state()) {
                case LOADED -> "loaded";
                case LOADING -> "loading";
                case UNLOADED, FAILED -> "unloaded";
            };
            boolean failed = m.state() == ManagedModel.State.FAILED || !m.failure().isEmpty();
            return new Status(value, failed ? Boolean.TRUE : null, failed ? PublicText.of(m.failure()) : null);
        }
    }

    /**
     * OpenAI's model object, plus its state, what serves it, the names requests may give it (its id first) and its
     * tags, as llama-server lists them; what only its route knows is missing until it has been loaded. A LoRA
     * adapter's has its base model as {@code parent} and its file as {@code root}, as vLLM lists them, and its base
     * model's state.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ModelCard(String id, String object, long created, String ownedBy, List<String> aliases,
                            List<String> tags, Status status, String route, String device, String architecture,
                            Integer contextLength, Integer vocabSize, Map<String, String> metadata, String parent,
                            String root) {
        static ModelCard of(ManagedModel m) {
            Optional<ModelInfo> info = m.description().map(ManagedModel.Description::info);
            return new ModelCard(m.id(), "model", STARTED, "laneway", m.spec().names(), m.spec().tags(), Status.of(m),
                    info.map(ModelInfo::route).orElse(null), info.map(ModelInfo::device).orElse(null),
                    info.map(ModelInfo::architecture).orElse(null), info.map(ModelInfo::contextLength).orElse(null),
                    info.map(ModelInfo::vocabSize).orElse(null), info.map(ModelInfo::metadata).orElse(null), null,
                    null);
        }

        static ModelCard of(AdapterCatalog.Adapter a, ManagedModel base) {
            ModelCard b = of(base);
            return new ModelCard(a.name(), "model", STARTED, "laneway", List.of(a.name()), List.of(), b.status(),
                    b.route(), b.device(), b.architecture(), b.contextLength(), b.vocabSize(), null, base.id(),
                    PublicText.of(a.path().toString()));
        }
    }
}
