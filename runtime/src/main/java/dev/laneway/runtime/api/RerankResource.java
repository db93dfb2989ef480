package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.ServedModel;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Reranking, with a reranker model and {@code serve --reranking} (or {@code --embeddings} with a model that declares
 * rank pooling): {@code POST /rerank}, {@code /reranking}, {@code /v1/rerank} and {@code /v1/reranking}, as
 * llama-server answers them. Each document is read with the query as the model's rerank prompt says, computed afresh
 * on a free stream as an embedding is, and scored by the model's ranking head; the answer lists the documents best
 * first. A request with {@code documents} gets Jina's and Cohere's shape ({@code results} of {@code index} and
 * {@code relevance_score}), one with {@code texts} the shape of Hugging Face's text-embeddings-inference (a list of
 * {@code index} and {@code score}).
 */
@Path("/")
public class RerankResource {
    private static final Set<String> FIELDS = Set.of("model", "query", "documents", "texts", "top_n",
            "return_documents", "return_text", "truncate", "raw_scores");

    @Inject
    GenerationService service;

    @Inject
    Admission admission;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    @POST
    @Path("{v: (v1/)?}{name: rerank|reranking}")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public JsonNode rerank(@HeaderParam("Content-Type") String contentType, byte[] body) {
        requireReranking();
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        for (String field : r.fieldNames()) {
            if (!FIELDS.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        if (r.bool("truncate").orElse(false)) {
            throw ApiException.invalidValue("truncate", "truncate is not supported: a document longer than the"
                    + " context is refused");
        }
        if (r.bool("raw_scores").orElse(false)) {
            throw ApiException.invalidValue("raw_scores", "raw_scores is not supported: scores are the ranking"
                    + " head's softmax");
        }
        boolean tei = r.raw("texts") != null;
        if (tei && r.raw("documents") != null) {
            throw ApiException.invalidValue("texts", "give documents or texts, not both");
        }
        String query = r.string("query").orElseThrow(() -> ApiException.invalidValue("query",
                "\"query\" must be provided"));
        List<String> documents = documents(tei ? "texts" : "documents", r.raw(tei ? "texts" : "documents"));
        int topN = r.integer("top_n").orElse(documents.size());
        if (topN < 0) {
            throw ApiException.invalidValue("top_n", "top_n must not be negative, was " + topN);
        }
        service.refuseAdapter(r.string("model"), "rankings");
        ServedModel model = service.modelFor(r.string("model"));
        if (EmbeddingsResource.pooling(config, model) != Pooling.RANK) {
            throw notServed();
        }
        List<int[]> prompts = prompts(model, query, documents);
        List<float[]> scores = EmbeddingJob.run(admission, model, prompts, Pooling.RANK, "documents",
                "this ranking");
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < documents.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble((Integer i) -> scores.get(i)[0]).reversed());
        String scoreName = tei ? "score" : "relevance_score";
        boolean withText = tei ? r.bool("return_text").orElse(false) : r.bool("return_documents").orElse(false);
        ArrayNode results = mapper.createArrayNode();
        for (int i : order.subList(0, Math.min(topN, order.size()))) {
            ObjectNode item = results.addObject().put("index", i).put(scoreName, scores.get(i)[0]);
            if (withText && tei) {
                item.put("text", documents.get(i));
            } else if (withText) {
                item.putObject("document").put("text", documents.get(i));
            }
        }
        if (tei) {
            return results;
        }
        int tokens = prompts.stream().mapToInt(p -> p.length).sum();
        ObjectNode answer = mapper.createObjectNode().put("model", r.string("model").orElse(model.id()))
                .put("object", "list");
        answer.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
        answer.set("results", results);
        return answer;
    }

    private void requireReranking() {
        if (!config.embeddings()) {
            throw notServed();
        }
    }

    private static ApiException notServed() {
        return ApiException.http(501, "not_supported", "this server does not rerank: start it with --reranking and"
                + " a reranker model (one with a ranking head, such as a Qwen3 reranker's GGUF)");
    }

    /** The documents: strings, or Jina's objects with a {@code text}. */
    private static List<String> documents(String param, JsonNode list) {
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw ApiException.invalidValue(param, "\"" + param + "\" must be a non-empty string array");
        }
        RequestBounds.atMost(param, list.size(), RequestBounds.EMBEDDING_INPUTS, "documents");
        List<String> documents = new ArrayList<>();
        for (JsonNode d : list) {
            if (d.isTextual()) {
                documents.add(d.textValue());
            } else if (d.isObject() && d.path("text").isTextual() && d.size() == 1) {
                documents.add(d.get("text").textValue());
            } else {
                throw ApiException.invalidType(param, "each of " + param + " must be a string or an object with"
                        + " only a text");
            }
        }
        return documents;
    }

    /** Each document's prompt with the query, each fitting the context. */
    private static List<int[]> prompts(ServedModel model, String query, List<String> documents) {
        int context = model.info().contextLength();
        List<int[]> prompts = new ArrayList<>();
        for (String document : documents) {
            int[] p;
            try {
                p = model.rankPrompt(query, document);
            } catch (InvalidRequestException e) {
                throw ApiException.invalidValue("documents", e.getMessage());
            } catch (UnsupportedOperationException e) {
                throw ApiException.http(501, "not_supported", e.getMessage());
            }
            int index = prompts.size();
            if (p.length == 0) {
                throw ApiException.invalidValue("documents", "document " + index + " with the query is no token");
            }
            if (p.length >= context) {
                throw ApiException.contextExceeded("documents", "document " + index + " with the query has "
                        + p.length + " tokens; the context holds " + context, p.length, context);
            }
            prompts.add(p);
        }
        return prompts;
    }
}
