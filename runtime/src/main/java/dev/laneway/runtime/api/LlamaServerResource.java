package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.SlotTransfer;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * llama-server's own API on the same port: {@code /completion} (and {@code /completions}) in its shape, {@code /infill},
 * {@code /models},
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

    @Inject
    ModelsResource models;


    private static final long STARTED = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime()
            / 1000;

    @POST
    @Path("completion")
    @Blocking
    public RestMulti<byte[]> completion(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(completion(JsonRequest.parse(body, mapper)));
    }

    GenerationService.Answer completion(JsonRequest request) {
        return service.complete(CompletionRequest.readNative(request, service.defaults()), true);
    }

    /**
     * llama-server's fill-in-the-middle: {@code input_prefix}, {@code input_suffix}, {@code input_extra} (other files'
     * chunks) and {@code prompt} (text that continues the prefix) laid out as {@link InfillPrompt} says, then answered
     * as {@code /completion}; 501 for a model without fill-in-the-middle tokens.
     */
    @POST
    @Path("infill")
    @Blocking
    public RestMulti<byte[]> infill(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(infill(JsonRequest.parse(body, mapper)));
    }

    GenerationService.Answer infill(JsonRequest r) {
        ServedModel model = service.modelFor(r.string("model"));
        InfillPrompt.FimTokens fim = InfillPrompt.tokens(model).orElseThrow(() -> ApiException.http(501,
                "not_supported", "this model has no fill-in-the-middle tokens (prefix, suffix and middle); /infill"
                        + " needs a code model trained for it"));
        int[] prompt = InfillPrompt.build(model, fim, r.string("input_prefix").orElse(""),
                r.string("input_suffix").orElse(""), InfillPrompt.extra(r.raw("input_extra")),
                r.string("prompt").orElse(""));
        return service.complete(CompletionRequest.readInfill(r, service.defaults(), prompt), true);
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

    /** llama-server's router: loads the model {@code {"model"}} names now (waiting for it), {@code {"success": true}}. */
    @POST
    @Path("models/load")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Boolean> load(@HeaderParam("Content-Type") String contentType, byte[] body) {
        ManagedModel managed = namedModel(contentType, body);
        service.readyModel(managed);
        return Map.of("success", true);
    }

    /**
     * llama-server's router: unloads the model {@code {"model"}} names, now if no request uses it, or else when the
     * last one ends; {@code {"success": true}}.
     */
    @POST
    @Path("models/unload")
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Boolean> unload(@HeaderParam("Content-Type") String contentType, byte[] body) {
        namedModel(contentType, body).unload();
        return Map.of("success", true);
    }

    private ManagedModel namedModel(String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        for (String field : r.fieldNames()) {
            if (!field.equals("model")) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        String name = r.string("model").orElseThrow(() -> ApiException.invalidValue("model", "model is required"));
        return service.managed(Optional.of(name));
    }

    /** {@code /v1/models} without {@code /v1}. */
    @GET
    @Path("models")
    @Produces(MediaType.APPLICATION_JSON)
    public ModelsResource.ModelList models() {
        return models.list();
    }

    /**
     * llama-server's {@code /metrics}, its {@code llamacpp:} names, then the gauges an inference gateway reads under
     * vLLM's names ({@link ApiMetrics#vllmText}); 501 unless the server runs with --metrics (or --metrics-open).
     */
    @GET
    @Path("metrics")
    public jakarta.ws.rs.core.Response metrics() {
        if (!config.metricsEndpoint()) {
            throw ApiException.http(501, "not_supported", "llama-server's /metrics is off; start the server with"
                    + " --metrics (Laneway's own metrics are under /q/metrics)");
        }
        return jakarta.ws.rs.core.Response.ok(metrics.llamaServerText() + metrics.vllmText())
                .header("Content-Type", "text/plain; version=0.0.4")
                .header("Process-Start-Time-Unix", STARTED)
                .build();
    }

    /** A model (the default one, or {@code ?model=}) and the server's defaults, as llama-server reports them. */
    @GET
    @Path("props")
    @Produces(MediaType.APPLICATION_JSON)
    public Props props(@QueryParam("model") String name) {
        ManagedModel managed = service.managed(Optional.ofNullable(name));
        ManagedModel.Description model = service.describedModel(Optional.of(managed.id()));
        RequestDefaults d = service.defaults();
        return new Props(new DefaultSettings(model.info().contextLength(), new DefaultParams(d.nPredict().orElse(-1),
                d.seed().orElse(0xffffffffL), d.temperature(), d.topK(), d.topP(), d.minP(), d.repeatPenalty())),
                managed.spec().options().streams(), managed.spec().path().getFileName().toString(), model.id(),
                model.chatTemplateSource().orElse(""), new Modalities(false, false), "laneway",
                managed.state() != ManagedModel.State.LOADED);
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
    public List<Slot> slots(@QueryParam("model") String name) {
        if (!config.slotsEndpoint()) {
            throw ApiException.http(501, "not_supported", "the slots endpoint is off (--no-slots)");
        }
        ManagedModel managed = service.managed(Optional.ofNullable(name));
        ManagedModel.Description model = service.describedModel(Optional.of(managed.id()));
        int busy = admission.running(managed.id());
        List<Slot> slots = new ArrayList<>();
        for (int i = 0; i < managed.spec().options().streams(); i++) {
            slots.add(new Slot(i, model.info().contextLength(), i < busy));
        }
        return slots;
    }

    /**
     * llama-server's slot actions on stream ID: {@code save} writes what its KV cache holds to the file that
     * {@code filename} names in the {@code --slot-save-path} directory, {@code restore} reads such a file back into
     * it, {@code erase} empties it. Each waits until no generation runs in the stream, up to {@link #SLOT_WAIT}.
     */
    @POST
    @Path("slots/{id}")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Object> slotAction(@PathParam("id") String id, @QueryParam("action") String action,
                                          @HeaderParam("Content-Type") String contentType, byte[] body) {
        java.nio.file.Path dir = config.slotSavePath().map(java.nio.file.Path::of).orElseThrow(() ->
                ApiException.http(501, "not_supported", "slot actions are off: start the server with"
                        + " --slot-save-path DIR"));
        int slot = slotNumber(id);
        ServedModel model = service.readyModel();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("id_slot", slot);
        try {
            switch (action == null ? "" : action) {
                case "save", "restore" -> {
                    HttpAnswers.requireJson(contentType);
                    String name = JsonRequest.parse(body, mapper).string("filename").orElseThrow(() ->
                            ApiException.invalidValue("filename", "filename is required"));
                    java.nio.file.Path file = slotFile(dir, name);
                    boolean save = action.equals("save");
                    SlotTransfer done = await(save ? model.saveSlot(slot, file) : model.restoreSlot(slot, file), slot);
                    answer.put("filename", name);
                    answer.put(save ? "n_saved" : "n_restored", done.tokens());
                    answer.put(save ? "n_written" : "n_read", done.bytes());
                    answer.put("timings", Map.of(save ? "save_ms" : "restore_ms", done.millis()));
                }
                case "erase" -> answer.put("n_erased", await(model.eraseSlot(slot), slot));
                default -> throw ApiException.invalidValue("action", "action must be save, restore or erase, was "
                        + (action == null ? "none" : action));
            }
        } catch (UnsupportedOperationException e) {
            throw ApiException.http(501, "not_supported", e.getMessage());
        }
        return answer;
    }

    /** How long a slot action waits for its stream to be free. */
    static final java.time.Duration SLOT_WAIT = java.time.Duration.ofMinutes(5);

    private static int slotNumber(String id) {
        try {
            return Integer.parseInt(id);
        } catch (NumberFormatException e) {
            throw ApiException.invalidValue("id_slot", "the slot in the path must be a stream's number");
        }
    }

    /**
     * The file {@code name} names in {@code dir}: a plain file name (no directory, no character that some file
     * system forbids or strips), never a path that leaves the directory.
     */
    static java.nio.file.Path slotFile(java.nio.file.Path dir, String name) {
        boolean plain = !name.isEmpty() && name.length() <= 255 && !name.equals(".") && !name.equals("..")
                && !name.startsWith(" ") && !name.endsWith(" ") && !name.endsWith(".")
                && name.codePoints().noneMatch(c -> c < 0x20 || (c >= 0x7f && c <= 0x9f) || "/\\:*?\"<>|".indexOf(c) >= 0
                        || (c >= 0xd800 && c <= 0xdfff) || c == 0xfffd || c == 0xfeff || c == 0xff0e || c == 0x2215
                        || c == 0x2216);
        if (!plain) {
            throw ApiException.invalidValue("filename", "filename must be a plain file name in the slot directory:"
                    + " no directory part, no control or reserved character (/ \\ : * ? \" < > |), at most 255"
                    + " characters, not ending with a dot or a space");
        }
        java.nio.file.Path file = dir.resolve(name).normalize();
        if (!dir.normalize().equals(file.getParent())) {
            throw ApiException.invalidValue("filename", "filename must name a file in the slot directory");
        }
        return file;
    }

    /** The action's result, waiting for the stream up to {@link #SLOT_WAIT}; its refusal as a 400. */
    private static <T> T await(java.util.concurrent.CompletableFuture<T> done, int slot) {
        try {
            return done.get(SLOT_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            done.cancel(false);
            throw ApiException.http(503, "unavailable", "stream " + slot + " stayed busy for "
                    + SLOT_WAIT.toMinutes() + " minutes; nothing was done");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done.cancel(false);
            throw ApiException.notReady("the server is stopping");
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof InvalidRequestException refused) {
                throw ApiException.invalidValue(refused.param(), refused.getMessage());
            }
            throw ApiException.notReady("the model is closing");
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Props(DefaultSettings defaultGenerationSettings, int totalSlots, String modelPath, String modelAlias,
                        String chatTemplate, Modalities modalities, String buildInfo, boolean isSleeping) {
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
