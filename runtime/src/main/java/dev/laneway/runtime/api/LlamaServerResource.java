package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.spi.ServedModel;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * llama-server's own API on the same port: {@code /completion} (and {@code /completions}) in its shape, {@code /models},
 * {@code /props}, {@code /slots} and {@code /metrics}.
 */
@Path("/")
public class LlamaServerResource {

    @Inject
    GenerationService service;

    @Inject
    Admission admission;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    @Inject
    ApiMetrics metrics;

    private static final long STARTED = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime()
            / 1000;

    @POST
    @Path("completion")
    @Blocking
    public RestMulti<byte[]> completion(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        CompletionRequest request = CompletionRequest.readNative(JsonRequest.parse(body, mapper), service.defaults());
        return HttpAnswers.toHttp(service.complete(request, true));
    }

    @POST
    @Path("completions")
    @Blocking
    public RestMulti<byte[]> completions(@HeaderParam("Content-Type") String contentType, byte[] body) {
        return completion(contentType, body);
    }

    /** llama-server's count of a chat request's prompt tokens, as the chat template renders it. */
    @POST
    @Path("{v: (v1/)?}chat/completions/input_tokens")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Integer> chatInputTokens(@HeaderParam("Content-Type") String contentType,
                                                          byte[] body) {
        HttpAnswers.requireJson(contentType);
        ChatRequest request = ChatRequest.read(JsonRequest.parse(body, mapper), service.defaults());
        return Map.of("input_tokens", service.prompt(service.modelFor(request.model()), request).ids()
                .length);
    }

    /** {@code /v1/models} without {@code /v1}. */
    @GET
    @Path("models")
    @Produces(MediaType.APPLICATION_JSON)
    public ModelsResource.ModelList models() {
        return new ModelsResource.ModelList("list", List.of(ModelsResource.ModelCard.of(service.readyModel())));
    }

    /** llama-server's {@code /metrics}, its {@code llamacpp:} names; 501 unless the server runs with --metrics. */
    @GET
    @Path("metrics")
    public jakarta.ws.rs.core.Response metrics() {
        if (!config.metricsEndpoint()) {
            throw ApiException.http(501, "not_supported", "llama-server's /metrics is off; start the server with"
                    + " --metrics (Laneway's own metrics are under /q/metrics)");
        }
        return jakarta.ws.rs.core.Response.ok(metrics.llamaServerText())
                .header("Content-Type", "text/plain; version=0.0.4")
                .header("Process-Start-Time-Unix", STARTED)
                .build();
    }

    /** The model and the server's defaults, as llama-server reports them. */
    @GET
    @Path("props")
    @Produces(MediaType.APPLICATION_JSON)
    public Props props() {
        ServedModel model = service.readyModel();
        RequestDefaults d = service.defaults();
        String file = java.nio.file.Path.of(config.model().orElse("model")).getFileName().toString();
        return new Props(new DefaultSettings(model.info().contextLength(), new DefaultParams(d.nPredict().orElse(-1),
                d.seed().orElse(0xffffffffL), d.temperature(), d.topK(), d.topP(), d.minP(), d.repeatPenalty())),
                config.streams(), file, model.id(),
                model.chatTemplateSource().orElse(""), new Modalities(false, false), "laneway");
    }

    /** llama-server lets {@code POST /props} change settings only when started to allow it; this server never does. */
    @POST
    @Path("props")
    public void changeProps() {
        throw ApiException.http(501, "not_supported", "changing the server's properties at run time is not"
                + " supported; set them on the command line");
    }

    /**
     * The streams as llama-server's slots: each with its context and whether it is generating now (the first as
     * many as there are generations running; the ids are positions, not the engine's slot numbers).
     */
    @GET
    @Path("slots")
    @Produces(MediaType.APPLICATION_JSON)
    public List<Slot> slots() {
        if (!config.slotsEndpoint()) {
            throw ApiException.http(501, "not_supported", "the slots endpoint is off (--no-slots)");
        }
        ServedModel model = service.readyModel();
        int busy = admission.running();
        List<Slot> slots = new ArrayList<>();
        for (int i = 0; i < config.streams(); i++) {
            slots.add(new Slot(i, model.info().contextLength(), i < busy));
        }
        return slots;
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Props(DefaultSettings defaultGenerationSettings, int totalSlots, String modelPath, String modelAlias,
                        String chatTemplate, Modalities modalities, String buildInfo) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record DefaultSettings(int nCtx, DefaultParams params) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record DefaultParams(int nPredict, long seed, double temperature, int topK, double topP, double minP,
                                double repeatPenalty) {
    }

    public record Modalities(boolean vision, boolean audio) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Slot(int id, int nCtx, boolean isProcessing) {
    }
}
