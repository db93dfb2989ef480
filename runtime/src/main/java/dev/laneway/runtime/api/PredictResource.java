package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.api.GenerationService.Answer;
import dev.laneway.runtime.serve.LanewayConfig;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PostConstruct;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Vertex AI's prediction protocol ({@code laneway.vertex}): {@code POST /predict} (or the route Vertex AI names)
 * with {@code {"instances": [...]}}, each instance a request to the endpoint its {@code @requestFormat} names
 * ({@code chatCompletions}, {@code completions}, ... or the endpoint's path), answered together as
 * {@code {"predictions": [...]}} in the order of the instances. An instance that fails has its endpoint's error body
 * as its prediction; the others are answered. Instances run at once, as far as the streams allow.
 */
@Path(PredictResource.PATH)
public class PredictResource {
    static final String PATH = "/predict";
    static final String FORMAT = "@requestFormat";
    /** Instances in one request, at most (as llama-server allows). */
    static final int MAX_INSTANCES = 128;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    @Inject
    GenerationResource openAi;

    @Inject
    LlamaServerResource llamaServer;

    @Inject
    AnthropicResource anthropic;

    @Inject
    ResponsesResource responses;

    @Inject
    EmbeddingsResource embeddings;

    /** An endpoint an instance may name: its path (which shapes its errors) and how it answers. */
    private record Endpoint(String path, Function<JsonRequest, Uni<JsonNode>> answer) {
    }

    private final Map<String, Endpoint> endpoints = new LinkedHashMap<>();

    @PostConstruct
    void endpoints() {
        add(new Endpoint("/v1/chat/completions", r -> whole(openAi.chatCompletions(r))), "chatCompletions",
                "/chat/completions");
        add(new Endpoint("/v1/completions", r -> whole(openAi.completions(r))), "completions");
        add(new Endpoint("/completion", r -> whole(llamaServer.completion(r))), "completion", "/completions");
        add(new Endpoint("/infill", r -> whole(llamaServer.infill(r))), "infill");
        add(new Endpoint(AnthropicFormat.PATH, r -> whole(anthropic.messages(r))), "messages");
        add(new Endpoint("/v1/responses", r -> whole(responses.responses(r))), "responses", "/responses");
        add(new Endpoint("/v1/embeddings", r -> Uni.createFrom().item(embeddings.embeddings(r))), "embeddings",
                "/embeddings");
    }

    private void add(Endpoint endpoint, String... names) {
        endpoints.put(endpoint.path(), endpoint);
        for (String name : names) {
            endpoints.put(name, endpoint);
        }
    }

    @POST
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<ObjectNode> predict(@HeaderParam("Content-Type") String contentType, byte[] body) {
        if (!config.vertex().enabled()) {
            throw ApiException.http(404, "not_found", "no predict route: Vertex AI's protocol is on only where"
                    + " Vertex AI runs the server (AIP_MODE=PREDICTION)");
        }
        HttpAnswers.requireJson(contentType);
        JsonNode instances = JsonRequest.parse(body, mapper).raw("instances");
        if (instances == null || !instances.isArray()) {
            throw ApiException.invalidValue("instances", "instances is required: an array of requests, each naming"
                    + " its endpoint in " + FORMAT);
        }
        RequestBounds.atMost("instances", instances.size(), MAX_INSTANCES, "instances");
        List<Uni<JsonNode>> answers = new ArrayList<>();
        instances.forEach(instance -> answers.add(answer(instance)));
        Uni<List<JsonNode>> all = answers.isEmpty() ? Uni.createFrom().item(List.of())
                : Uni.join().all(answers).andFailFast();
        return all.map(predictions -> {
            ObjectNode out = mapper.createObjectNode();
            out.putArray("predictions").addAll(predictions);
            return out;
        });
    }

    /** One instance's answer, or its endpoint's error body. */
    private Uni<JsonNode> answer(JsonNode instance) {
        String path = PATH;
        try {
            if (!(instance instanceof ObjectNode object)) {
                throw ApiException.invalidValue("instances", "each instance must be a JSON object");
            }
            JsonNode format = object.get(FORMAT);
            if (format == null || !format.isTextual()) {
                throw ApiException.invalidValue(FORMAT, "each instance must name its endpoint in a string " + FORMAT
                        + ": one of " + String.join(", ", endpoints.keySet()));
            }
            Endpoint endpoint = endpoints.get(format.asText());
            if (endpoint == null) {
                throw ApiException.invalidValue(FORMAT, "no endpoint " + format.asText() + " for " + FORMAT
                        + "; this server's: " + String.join(", ", endpoints.keySet()));
            }
            path = endpoint.path();
            ObjectNode request = object.deepCopy();
            request.remove(FORMAT);
            if (request.path("stream").asBoolean(false)) {
                throw ApiException.invalidValue("stream", "predictions are answered whole: stream must be false or"
                        + " left out");
            }
            String errorPath = path;
            return endpoint.answer().apply(JsonRequest.of(request)).onFailure(ApiException.class)
                    .recoverWithItem(e -> error((ApiException) e, errorPath));
        } catch (ApiException e) {
            return Uni.createFrom().item(error(e, path));
        }
    }

    private JsonNode error(ApiException e, String path) {
        return mapper.valueToTree(e.bodyFor(path));
    }

    /** A whole answer's body as JSON, whatever its status: an error answer's body is its error. */
    private Uni<JsonNode> whole(Answer answer) {
        return ((Answer.Whole) answer).reply().map(reply -> {
            try {
                return mapper.readTree(reply.body());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
