package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.ServedModel;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/**
 * Embeddings, with {@code serve --embeddings}: OpenAI's {@code POST /v1/embeddings} and llama-server's
 * {@code /embeddings}. Each input is computed afresh on a free stream, admitted as a generation is; its hidden
 * states after the model's final norm are pooled as {@code --pooling} says (mean, cls or last) and normalised as
 * {@code embd_normalize} says (Euclidean unless the request asks otherwise).
 */
@Path("/")
public class EmbeddingsResource {
    private static final Set<String> FIELDS = Set.of("model", "input", "content", "encoding_format", "embd_normalize",
            "dimensions", "user");

    @Inject
    GenerationService service;

    @Inject
    Admission admission;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    /** OpenAI's shape: {@code {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], ...}}. */
    @POST
    @Path("{v: (v1/)?}embeddings")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public JsonNode embeddings(@HeaderParam("Content-Type") String contentType, byte[] body) {
        requireEmbeddings();
        HttpAnswers.requireJson(contentType);
        return embeddings(JsonRequest.parse(body, mapper));
    }

    JsonNode embeddings(JsonRequest r) {
        requireEmbeddings();
        for (String field : r.fieldNames()) {
            if (!FIELDS.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        // llama-server answers its own "content" field in its own shape: [{"index", "embedding": [[...]]}].
        boolean openAi = r.raw("input") != null;
        JsonNode input = openAi ? r.raw("input") : r.raw("content");
        if (input == null || input.isNull()) {
            throw ApiException.invalidValue("input", "input is required: a string, a list of strings, a list of token"
                    + " ids or a list of such lists");
        }
        String format = r.string("encoding_format").orElse("float");
        if (!format.equals("float") && !format.equals("base64")) {
            throw ApiException.invalidValue("encoding_format", "encoding_format must be float or base64, was "
                    + format);
        }
        int normalize = r.integer("embd_normalize").orElse(2);
        service.refuseAdapter(r.string("model"), "embeddings");
        ServedModel model = service.modelFor(r.string("model"));
        List<int[]> prompts = prompts(model, input);
        int tokens = prompts.stream().mapToInt(p -> p.length).sum();
        if (pooling(config, model) == Pooling.RANK) {
            throw ApiException.invalidValue("input", "this server pools as rank, which gives a reranker's relevance"
                    + " scores, not embeddings: use POST /v1/rerank");
        }
        List<float[]> vectors = EmbeddingJob.run(admission, model, prompts, pooling(config, model), "input",
                "these embeddings");
        int width = vectors.get(0).length;
        java.util.OptionalInt dimensions = r.integer("dimensions");
        if (dimensions.isPresent() && dimensions.getAsInt() != width) {
            throw ApiException.invalidValue("dimensions", "dimensions must be this model's " + width
                    + " (embeddings are not shortened), was " + dimensions.getAsInt());
        }
        ArrayNode data = mapper.createArrayNode();
        for (int i = 0; i < vectors.size(); i++) {
            float[] v = normalised(vectors.get(i), normalize);
            ObjectNode item = data.addObject();
            if (openAi) {
                item.put("object", "embedding").put("index", i);
                if (format.equals("base64")) {
                    item.put("embedding", base64(v));
                } else {
                    item.set("embedding", floats(v));
                }
            } else {
                item.put("index", i);
                item.putArray("embedding").add(floats(v));
            }
        }
        if (!openAi) {
            return data;
        }
        ObjectNode answer = mapper.createObjectNode().put("object", "list");
        answer.set("data", data);
        answer.put("model", r.string("model").orElse(model.id()));
        answer.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
        return answer;
    }

    private void requireEmbeddings() {
        if (!config.embeddings()) {
            throw ApiException.http(501, "not_supported", "embeddings are off: start the server with --embeddings");
        }
    }

    /** Each input as token ids: strings tokenized with the model's BOS, as a completion's prompt is. */
    private static List<int[]> prompts(ServedModel model, JsonNode input) {
        List<int[]> prompts = new ArrayList<>();
        if (input.isTextual()) {
            prompts.add(text(model, input, 0));
        } else if (input.isArray() && !input.isEmpty() && input.get(0).isIntegralNumber()) {
            prompts.add(ids(input, model));
        } else if (input.isArray() && !input.isEmpty()) {
            RequestBounds.atMost("input", input.size(), RequestBounds.EMBEDDING_INPUTS, "inputs");
            for (JsonNode item : input) {
                if (item.isTextual()) {
                    prompts.add(text(model, item, prompts.size()));
                } else if (item.isArray()) {
                    prompts.add(ids(item, model));
                } else {
                    throw ApiException.invalidType("input", "each input must be a string or a list of token ids");
                }
            }
        } else {
            throw ApiException.invalidType("input", "input must be a string, a list of strings, a list of token ids"
                    + " or a list of such lists, and not empty");
        }
        int context = model.info().contextLength();
        for (int i = 0; i < prompts.size(); i++) {
            int[] p = prompts.get(i);
            if (p.length == 0) {
                throw ApiException.invalidValue("input", "input " + i + " is empty");
            }
            if (p.length >= context) {
                throw ApiException.contextExceeded("input", "input " + i + " has " + p.length + " tokens; the"
                        + " context holds " + context, p.length, context);
            }
        }
        return prompts;
    }

    private static int[] text(ServedModel model, JsonNode text, int index) {
        if (text.asText().isEmpty()) {
            throw ApiException.invalidValue("input", "input " + index + " is an empty string");
        }
        return model.tokenize(text.asText(), true, true);
    }

    private static int[] ids(JsonNode list, ServedModel model) {
        int vocab = model.info().vocabSize();
        int[] ids = new int[list.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = list.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0 || id.asInt() >= vocab) {
                throw ApiException.invalidValue("input", "token ids must be integers from 0 to " + (vocab - 1));
            }
            ids[i] = id.asInt();
        }
        return ids;
    }

    /** {@code --pooling} when given, else as the model declares it, else the mean. */
    static Pooling pooling(LanewayConfig config, ServedModel model) {
        return Pooling.of(config.pooling().orElse(model.info().metadata().getOrDefault("pooling", "mean")));
    }

    /**
     * The vector scaled as llama.cpp's {@code embd_normalize} says: -1 not at all, 0 to the largest magnitude of a
     * 16-bit integer, 2 to unit Euclidean length, p > 0 to unit p-norm (1: taxicab).
     */
    static float[] normalised(float[] v, int how) {
        double norm;
        if (how < 0) {
            return v;
        } else if (how == 0) {
            double max = 0;
            for (float x : v) {
                max = Math.max(max, Math.abs(x));
            }
            norm = max / 32760.0;
        } else if (how == 2) {
            double sum = 0;
            for (float x : v) {
                sum += (double) x * x;
            }
            norm = Math.sqrt(sum);
        } else {
            double sum = 0;
            for (float x : v) {
                sum += Math.pow(Math.abs(x), how);
            }
            norm = Math.pow(sum, 1.0 / how);
        }
        float[] out = new float[v.length];
        double scale = norm > 0 ? 1.0 / norm : 0;
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] * scale);
        }
        return out;
    }

    private ArrayNode floats(float[] v) {
        ArrayNode a = mapper.createArrayNode();
        for (float x : v) {
            a.add(x);
        }
        return a;
    }

    /** The vector as little-endian 32-bit floats in base64, as OpenAI's encoding_format base64. */
    static String base64(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return Base64.getEncoder().encodeToString(b.array());
    }
}
