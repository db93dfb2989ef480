package dev.laneway.runtime.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged server started as a user starts it on a reranker, {@code laneway serve -m reranker.gguf --reranking}:
 * several clients at once, in Jina's and Cohere's shape and in text-embeddings-inference's, get the relevance scores
 * llama-server gives for the same file (the engine's reference, {@code rerank/qwen3-reranker.json}), best first;
 * what the endpoint does not do is refused by name, and embeddings are refused on a reranker.
 */
class RerankServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double TOLERANCE = 3e-3;

    @TempDir
    static Path dir;
    private static PackagedServer server;
    private static JsonNode reference;

    @BeforeAll
    static void start() throws Exception {
        reference = JSON.readTree(Files.readString(Path.of("..", "engine", "src", "test", "resources", "rerank",
                "qwen3-reranker.json")));
        Path gguf = dir.resolve("reranker.gguf");
        RandomModel.writeReranker(ModelShape.TINY_QWEN3, DType.F32, 7, gguf, reference.get("template").asText());
        server = PackagedServer.start(gguf, List.of("-Dlaneway.cache.dir=" + dir.resolve("cache")), "--reranking",
                "--streams", "2", "--alias", "reranker");
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static String request(String documentsField, int topN, String extra) throws Exception {
        return "{\"model\":\"reranker\",\"query\":" + JSON.writeValueAsString(reference.get("query").asText())
                + ",\"" + documentsField + "\":" + JSON.writeValueAsString(reference.get("documents"))
                + (topN >= 0 ? ",\"top_n\":" + topN : "") + extra + "}";
    }

    private static double expected(int index) {
        return reference.get("templated").get("scores").get(index).asDouble();
    }

    @Test
    void clientsAtOnceGetLlamaServersScoresBestFirst() throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(4);
        try {
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                String body = c % 2 == 0 ? request("documents", 3, ",\"return_documents\":true")
                        : request("texts", -1, ",\"return_text\":true");
                String path = c < 2 ? "/v1/rerank" : "/rerank";
                answers.add(clients.submit(() -> server.post(path, body)));
            }
            for (int c = 0; c < 4; c++) {
                HttpResponse<String> answer = answers.get(c).get();
                assertEquals(200, answer.statusCode(), answer.body());
                JsonNode root = JSON.readTree(answer.body());
                JsonNode results = c % 2 == 0 ? root.get("results") : root;
                String score = c % 2 == 0 ? "relevance_score" : "score";
                assertEquals(c % 2 == 0 ? 3 : reference.get("documents").size(), results.size(), answer.body());
                double previous = Double.POSITIVE_INFINITY;
                for (JsonNode r : results) {
                    int index = r.get("index").asInt();
                    assertEquals(expected(index), r.get(score).asDouble(), TOLERANCE, answer.body());
                    assertTrue(r.get(score).asDouble() <= previous, "best first: " + answer.body());
                    previous = r.get(score).asDouble();
                    String text = c % 2 == 0 ? r.at("/document/text").asText() : r.get("text").asText();
                    assertEquals(reference.get("documents").get(index).asText(), text);
                }
                if (c % 2 == 0) {
                    assertEquals(reference.get("templated").get("prompt_tokens").asInt(),
                            root.at("/usage/prompt_tokens").asInt(), answer.body());
                    assertEquals("reranker", root.get("model").asText());
                    assertEquals("list", root.get("object").asText());
                }
            }
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void theModelIsListedAsAReranker() throws Exception {
        JsonNode card = JSON.readTree(server.get("/v1/models").body()).at("/data/0");
        assertEquals("rank", card.at("/metadata/pooling").asText(), card.toString());
    }

    @Test
    void whatTheEndpointDoesNotDoIsRefusedByName() throws Exception {
        assertRefused(server.post("/v1/rerank", "{\"documents\":[\"a\"]}"), "query");
        assertRefused(server.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[]}"), "documents");
        assertRefused(server.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\"],\"rank_fields\":[\"t\"]}"),
                "rank_fields");
        assertRefused(server.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\"],\"truncate\":true}"),
                "truncate");
        assertRefused(server.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\"],\"top_n\":-1}"), "top_n");
        assertRefused(server.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"" + "x ".repeat(600) + "\"]}"),
                "documents");
        assertRefused(server.post("/v1/embeddings", "{\"input\":\"a panda\"}"), "input");
        // and it keeps serving
        assertEquals(200, server.post("/v1/rerank", request("documents", 1, "")).statusCode());
    }

    private static void assertRefused(HttpResponse<String> answer, String param) throws Exception {
        assertEquals(400, answer.statusCode(), answer.body());
        assertEquals(param, JSON.readTree(answer.body()).at("/error/param").asText(), answer.body());
    }
}
