package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.Pooling;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HEAD;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Ollama's API on the serving port: {@code /api/chat} and {@code /api/generate} on the generation path (streamed as
 * newline-delimited JSON unless {@code stream} is false), {@code /api/embed} and {@code /api/embeddings} on the
 * embeddings path, and the model's description under {@code /api/tags}, {@code /api/ps}, {@code /api/show} and
 * {@code /api/version}. A request's {@code keep_alive} says how long the model stays open after it. What manages
 * a library of models ({@code /api/pull}, {@code /api/push}, {@code /api/create}, {@code /api/copy},
 * {@code /api/delete}, blobs) is refused by name: this server serves the models it was started with. Errors come as
 * Ollama's {@code {"error": message}}.
 */
@Path("/api")
public class OllamaResource {
    private static final String VERSION = Optional.ofNullable(OllamaResource.class.getPackage()
            .getImplementationVersion()).orElse("0.0.0-dev");

    @Inject
    GenerationService service;

    @Inject
    ModelService models;

    @Inject
    EmbeddingsResource embeddings;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    @GET
    @Path("version")
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode version() {
        return mapper.createObjectNode().put("version", VERSION);
    }

    /** The models this server can serve, loaded or not. */
    @GET
    @Path("tags")
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode tags() {
        service.managed();  // 503 while the server starts or stops
        ObjectNode answer = mapper.createObjectNode();
        ArrayNode list = answer.putArray("models");
        models.models().forEach(m -> list.add(entry(m)));
        return answer;
    }

    /** The models loaded in memory now, with when each unloads unless a request comes. */
    @GET
    @Path("ps")
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode ps() {
        service.managed();
        ObjectNode answer = mapper.createObjectNode();
        ArrayNode list = answer.putArray("models");
        for (ManagedModel m : models.models()) {
            if (m.state() != ManagedModel.State.LOADED || m.description().isEmpty()) {
                continue;
            }
            ObjectNode entry = entry(m);
            entry.put("size_vram", 0);
            entry.put("context_length", m.description().get().info().contextLength());
            m.expiresAt().ifPresent(at -> entry.put("expires_at", at.toString()));
            list.add(entry);
        }
        return answer;
    }

    /** What the model is: its template, details, facts under GGUF's key names, and what it can do. */
    @POST
    @Path("show")
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode show(@HeaderParam("Content-Type") String contentType, byte[] body) {
        JsonRequest r = JsonRequest.parse(body, mapper);
        for (String field : r.fieldNames()) {
            if (!List.of("model", "name", "verbose").contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        Optional<String> name = r.string("model").or(() -> r.string("name"));
        if (name.isEmpty()) {
            throw ApiException.invalidValue("model", "model is required");
        }
        ManagedModel managed = service.managed(Optional.of(modelName(name.get())));
        ManagedModel.Description d = service.describedModel(Optional.of(managed.id()));
        ModelInfo info = d.info();
        ObjectNode answer = mapper.createObjectNode();
        answer.put("license", "").put("modelfile", "").put("parameters", "");
        answer.put("template", d.chatTemplateSource().orElse(""));
        answer.set("details", details(managed, Optional.of(info)));
        ObjectNode facts = answer.putObject("model_info");
        facts.put("general.architecture", info.architecture());
        facts.put(info.architecture() + ".context_length", info.contextLength());
        facts.put(info.architecture() + ".vocab_size", info.vocabSize());
        info.metadata().forEach((key, value) -> facts.put("laneway." + key, value));
        ArrayNode capabilities = answer.putArray("capabilities");
        String pooling = info.metadata().getOrDefault("pooling", "");
        if (!pooling.equals(Pooling.RANK.name().toLowerCase(java.util.Locale.ROOT))) {
            capabilities.add("completion").add("tools");
        }
        if (config.embeddings()) {
            capabilities.add("embedding");
        }
        answer.put("modified_at", modified(managed).toString());
        return answer;
    }

    @POST
    @Path("chat")
    @Blocking
    public RestMulti<byte[]> chat(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(chat(JsonRequest.parse(body, mapper)));
    }

    GenerationService.Answer chat(JsonRequest ollama) {
        ChatRequest request = ChatRequest.read(JsonRequest.of(OllamaRequest.chat(ollama, context(ollama))),
                service.defaults());
        keepAlive(ollama);
        return service.chat(request, (model, name, params, promptTokens) -> new OllamaFormat(name, true));
    }

    /**
     * A generation; with an empty prompt, Ollama's way to load the model (or, with {@code keep_alive: 0}, to close
     * it), answered at once with {@code done_reason} {@code load} or {@code unload}.
     */
    @POST
    @Path("generate")
    @Blocking
    public RestMulti<byte[]> generate(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonRequest ollama = JsonRequest.parse(body, mapper);
        if (ollama.string("prompt").orElse("").isEmpty() && ollama.raw("system") == null) {
            return HttpAnswers.toHttp(loadOrUnload(ollama));
        }
        return HttpAnswers.toHttp(generate(ollama));
    }

    GenerationService.Answer generate(JsonRequest ollama) {
        ObjectNode mapped = OllamaRequest.generate(ollama, context(ollama));
        keepAlive(ollama);
        if (mapped.has("prompt")) {
            CompletionRequest request = CompletionRequest.read(JsonRequest.of(mapped), service.defaults());
                return service.complete(request, (model, name, params, promptTokens) -> new OllamaFormat(name, false));
        }
        ChatRequest request = ChatRequest.read(JsonRequest.of(mapped), service.defaults());
        return service.chat(request, (model, name, params, promptTokens) -> new OllamaFormat(name, false));
    }

    private GenerationService.Answer loadOrUnload(JsonRequest ollama) {
        OllamaRequest.generate(ollama, context(ollama));  // the fields are checked as for a generation
        ManagedModel managed = named(ollama);
        Optional<Duration> keepAlive = OllamaRequest.keepAlive(ollama);
        String id = managed.id();
        String reason;
        if (keepAlive.isPresent() && keepAlive.get().isZero()) {
            managed.unload();
            reason = "unload";
        } else {
            service.readyModel(managed);
            keepAlive.ifPresent(service::keepAlive);
            reason = "load";
        }
        ObjectNode line = mapper.createObjectNode().put("model", id).put("created_at", Instant.now().toString())
                .put("response", "").put("done", true).put("done_reason", reason);
        return new GenerationService.Answer.Whole(io.smallrye.mutiny.Uni.createFrom().item(new HttpReply(200,
                java.util.Map.of("Content-Type", HttpReply.JSON), HttpReply.write(line, mapper))), Optional.empty());
    }

    /** {@code {"model", "input": text or texts}}: {@code {"model", "embeddings": [[...]], ...}}. */
    @POST
    @Path("embed")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode embed(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        long started = System.nanoTime();
        JsonRequest r = JsonRequest.parse(body, mapper);
        JsonNode answer = embedded(r, "input", List.of("model", "input", "truncate", "dimensions", "keep_alive"));
        ObjectNode out = mapper.createObjectNode().put("model", named(r).id());
        ArrayNode vectors = out.putArray("embeddings");
        answer.get("data").forEach(item -> vectors.add(item.get("embedding")));
        out.put("total_duration", System.nanoTime() - started).put("load_duration", 0);
        out.put("prompt_eval_count", answer.get("usage").get("prompt_tokens").asInt());
        return out;
    }

    /** The older {@code {"model", "prompt"}}: {@code {"embedding": [...]}}. */
    @POST
    @Path("embeddings")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode embeddingsLegacy(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        JsonNode answer = embedded(r, "prompt", List.of("model", "prompt", "keep_alive"));
        ObjectNode out = mapper.createObjectNode();
        out.set("embedding", answer.get("data").get(0).get("embedding"));
        return out;
    }

    /** An Ollama embedding request on the OpenAI embeddings path; longer inputs than the context are refused. */
    private JsonNode embedded(JsonRequest r, String inputField, List<String> fields) {
        for (String field : r.fieldNames()) {
            if (!fields.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        if (r.bool("truncate").orElse(false)) {
            throw ApiException.invalidValue("truncate", "truncate: true is not supported: an input longer than the"
                    + " context is refused, not shortened");
        }
        ObjectNode openAi = mapper.createObjectNode().put("model", named(r).id());
        JsonNode input = r.raw(inputField);
        if (input == null) {
            throw ApiException.invalidValue(inputField, inputField + " is required");
        }
        openAi.set("input", input);
        if (r.raw("dimensions") != null) {
            openAi.set("dimensions", r.raw("dimensions"));
        }
        keepAlive(r);
        return embeddings.embeddings(JsonRequest.of(openAi));
    }

    /** Managing models by name needs a library and the network; this server serves the models it was started with. */
    @POST
    @Path("{action: pull|push|create|copy}")
    public void manage(@PathParam("action") String action) {
        throw ApiException.http(501, "not_supported", "/api/" + action + " is not supported: this server serves the"
                + " model it was started with (-m) and does not fetch, build or store models");
    }

    @DELETE
    @Path("delete")
    public void delete() {
        manage("delete");
    }

    @HEAD
    @Path("blobs/{digest}")
    public void blobExists(@PathParam("digest") String digest) {
        manage("blobs");
    }

    @POST
    @Path("blobs/{digest}")
    public void blob(@PathParam("digest") String digest) {
        manage("blobs");
    }

    /** Ollama names a model {@code name:tag}; this server's model answers to its names with the tag {@code latest}. */
    static String modelName(String name) {
        return name.endsWith(":latest") ? name.substring(0, name.length() - ":latest".length()) : name;
    }

    /** The model an Ollama request names; the default one when it names none. */
    private ManagedModel named(JsonRequest r) {
        return service.managed(r.string("model").map(OllamaResource::modelName));
    }

    private void keepAlive(JsonRequest r) {
        OllamaRequest.keepAlive(r).ifPresent(service::keepAlive);
    }

    /** The context of the model an Ollama request names, which bounds its {@code num_ctx}. */
    private int context(JsonRequest r) {
        return service.describedModel(Optional.of(named(r).id())).info().contextLength();
    }

    /**
     * A model in Ollama's lists: its name, size on disk, a digest of what it is served from, and its details (its
     * family once it has been loaded).
     */
    private ObjectNode entry(ManagedModel m) {
        ObjectNode entry = mapper.createObjectNode();
        entry.put("name", m.id()).put("model", m.id());
        entry.put("modified_at", modified(m).toString());
        entry.put("size", m.bytes());
        entry.put("digest", digest(m));
        entry.set("details", details(m, m.description().map(ManagedModel.Description::info)));
        return entry;
    }

    private ObjectNode details(ManagedModel m, Optional<ModelInfo> info) {
        ObjectNode details = mapper.createObjectNode().put("parent_model", "");
        details.put("format", m.spec().path().toString().endsWith(".gguf") ? "gguf" : "laneway");
        String family = info.map(ModelInfo::architecture).orElse("");
        details.put("family", family);
        ArrayNode families = details.putArray("families");
        if (!family.isEmpty()) {
            families.add(family);
        }
        details.put("parameter_size", "");
        details.put("quantization_level", "");
        return details;
    }

    private static Instant modified(ManagedModel m) {
        try {
            return Files.getLastModifiedTime(m.spec().path()).toInstant();
        } catch (IOException e) {
            return Instant.EPOCH;
        }
    }

    /**
     * A SHA-256 of the model's name, size and modification time: it changes when the served files do, without
     * reading gigabytes to hash them (not a digest of the contents, as Ollama's is).
     */
    private static String digest(ManagedModel m) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update((m.id() + "\n" + m.bytes() + "\n" + modified(m).toEpochMilli())
                    .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
