package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.laneway.runtime.api.StoriesServerTest.post;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llama-server's own API on the real server and model, set up as llama.cpp's server tests set up llama-server:
 * {@code /completion} in its shape, streamed and not, with the server's sampling defaults; seeded sampling that draws
 * what llama-server draws; {@code /props}, {@code /slots}, and the paths without {@code /v1}.
 */
@QuarkusTest
@TestProfile(StoriesProfile.LlamaServer.class)
class StoriesLlamaServerApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @io.quarkus.test.common.http.TestHTTPResource("/")
    java.net.URL server;

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    /**
     * With the same seed and settings, the tokens are the ones llama-server drew from the same model (its answers in
     * {@code llama-server-sampled-stories260K.json}, with the command that made them): the first two cases from the
     * server's defaults (--temp 0.8 --seed 42), the others with top-k off, top-p, min-p and other temperatures.
     */
    @Test
    void seededSamplingDrawsWhatLlamaServerDraws() throws IOException {
        JsonNode cases;
        try (InputStream in = getClass().getResourceAsStream("/llama-server-sampled-stories260K.json")) {
            cases = JSON.readTree(in).get("cases");
        }
        for (JsonNode c : cases) {
            JsonPath answer = post("/completion", c.get("request").toString()).then().statusCode(200)
                    .extract().jsonPath();
            assertEquals(c.get("content").asText(), answer.getString("content"), c.get("request").toString());
            assertEquals(JSON.convertValue(c.get("tokens"), List.class), answer.getList("tokens"));
        }
    }

    /**
     * Several clients at once, on the two streams, through every API: llama-server's /completion, Anthropic's
     * Messages and OpenAI's Responses and chat, as many as the streams and the line hold (2 + 4). Each greedy answer
     * is the one the same request gets alone.
     */
    @Test
    void clientsOfEveryApiAtOnceEachGetTheirAnswerAlone() throws Exception {
        String chat = "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}]";
        List<String[]> requests = List.of(
                new String[]{"/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":12,\"temperature\":0}",
                        "content"},
                new String[]{"/v1/messages", "{\"model\":\"x\",\"max_tokens\":12,\"temperature\":0," + chat + "}",
                        "content[0].text"},
                new String[]{"/v1/responses", "{\"model\":\"x\",\"max_output_tokens\":12,\"temperature\":0,"
                        + "\"input\":\"Tell me a story\"}", "output_text"},
                new String[]{"/v1/chat/completions", "{\"max_tokens\":12,\"temperature\":0," + chat + "}",
                        "choices[0].message.content"});
        StoriesServerTest.assertAnswersAtOnceAsAlone(requests, 6);
    }

    /**
     * Vertex AI's prediction protocol: each instance answered as the endpoint its {@code @requestFormat} names, in
     * order, run at once; an instance that fails has its error as its prediction while the others are answered; the
     * same at the route Vertex AI names, and its health route answers as /health.
     */
    @Test
    void vertexPredictionsAnswerEachInstanceAsItsEndpoint() {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],\"max_tokens\":8,"
                + "\"temperature\":0}";
        String completion = "{\"prompt\":\"Once upon a time\",\"n_predict\":8,\"temperature\":0}";
        String chatAlone = post("/v1/chat/completions", chat).then().statusCode(200).extract().jsonPath()
                .getString("choices[0].message.content");
        String completionAlone = post("/completion", completion).then().statusCode(200).extract().path("content");
        String body = "{\"instances\":[" + chat.replace("{\"messages\"", "{\"@requestFormat\":\"chatCompletions\","
                + "\"messages\"") + "," + completion.replace("{", "{\"@requestFormat\":\"/completion\",")
                + ",{\"@requestFormat\":\"imageGenerations\",\"prompt\":\"x\"}"
                + ",{\"@requestFormat\":\"completions\",\"prompt\":\"x\",\"stream\":true}"
                + ",{\"@requestFormat\":\"messages\",\"max_tokens\":4}"
                + "," + chat.replace("{\"messages\"", "{\"@requestFormat\":\"chatCompletions\",\"messages\"") + "]}";
        for (String route : List.of("/predict", StoriesProfile.LlamaServer.VERTEX_PREDICT)) {
            io.restassured.response.Response response = post(route, body);
            assertEquals(200, response.statusCode(), route + ": " + response.asString());
            JsonPath answer = response.jsonPath();
            assertEquals(6, answer.getList("predictions").size(), route);
            assertEquals(chatAlone, answer.getString("predictions[0].choices[0].message.content"), route);
            assertEquals(completionAlone, answer.getString("predictions[1].content"), route);
            assertEquals("@requestFormat", answer.getString("predictions[2].error.param"));
            assertTrue(answer.getString("predictions[2].error.message").contains("imageGenerations"));
            assertEquals("stream", answer.getString("predictions[3].error.param"));
            // Anthropic's endpoint errs in Anthropic's shape.
            assertEquals("invalid_request_error", answer.getString("predictions[4].error.type"));
            assertEquals("error", answer.getString("predictions[4].type"));
            assertEquals(chatAlone, answer.getString("predictions[5].choices[0].message.content"), route);
        }
        post("/predict", "{\"instances\":{}}").then().statusCode(400).body("error.param", equalTo("instances"));
        String many = "{\"instances\":[" + String.join(",", java.util.Collections.nCopies(129, "{}")) + "]}";
        post("/predict", many).then().statusCode(400).body("error.param", equalTo("instances"));
        given().get("/vertex/health").then().statusCode(200).body("status", equalTo("ok"));
    }

    /**
     * With {@code --context-shift}, a generation that fills its context goes on past it, up to its n_predict, and is
     * truncated; without n_predict it still ends where the context does (the server's --n-predict aside).
     */
    @Test
    void aGenerationThatFillsTheContextGoesOnByShiftingIt() {
        int ctx = given().get("/props").then().extract().path("default_generation_settings.n_ctx");
        JsonPath shifted = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":" + (ctx + 100)
                + ",\"temperature\":0,\"ignore_eos\":true,\"n_keep\":2}").then().statusCode(200).extract().jsonPath();
        assertEquals(ctx + 100, shifted.getInt("tokens_predicted"));
        assertTrue(shifted.getBoolean("truncated"));
        assertEquals("limit", shifted.getString("stop_type"));
        post("/completion", "{\"prompt\":\"Once\",\"n_keep\":-2}").then().statusCode(400)
                .body("error.param", equalTo("n_keep"));
    }

    /**
     * A prompt that does not fit: on llama-server's own path its error has llama-server's type; on OpenAI's, OpenAI's
     * type and code; both say the prompt's tokens and the context's.
     */
    @Test
    void aPromptThatDoesNotFitIsRefusedInEachApisShape() {
        String messages = "{\"messages\":[" + String.join(",", java.util.Collections.nCopies(300,
                "{\"role\":\"user\",\"content\":\"What is the best book\"}")) + "]}";
        for (String path : List.of("/chat/completions", "/v1/chat/completions")) {
            JsonPath error = post(path, messages).then().statusCode(400).extract().jsonPath();
            assertEquals(path.startsWith("/v1/") ? "invalid_request_error" : "exceed_context_size_error",
                    error.getString("error.type"), path);
            assertEquals("context_length_exceeded", error.getString("error.code"));
            assertEquals(2048, error.getInt("error.n_ctx"));
            assertTrue(error.getInt("error.n_prompt_tokens") > 2048);
        }
        // other errors carry no such fields
        JsonPath other = post("/chat/completions", "{\"messages\":[]}").then().statusCode(400).extract().jsonPath();
        assertFalse(other.getMap("error").containsKey("n_ctx"));
    }

    @Test
    void verboseAnswersCarryThePromptAsTheModelReadIt() {
        String messages = "\"messages\":[{\"role\":\"system\",\"content\":\"Book\"},{\"role\":\"user\","
                + "\"content\":\"What is the best book\"}]";
        String rendered = post("/apply-template", "{" + messages + "}").then().statusCode(200).extract().path("prompt");
        JsonPath chat = post("/v1/chat/completions", "{" + messages + ",\"max_tokens\":4,\"temperature\":0}").then()
                .statusCode(200).extract().jsonPath();
        // The prompt's tokens detokenized: the rendered conversation after the BOS token's text, as llama-server shows.
        assertEquals("<s> " + rendered, chat.getString("__verbose.prompt"));
        assertEquals(chat.getString("choices[0].message.content"), chat.getString("__verbose.content"));
        assertEquals(4, chat.getInt("__verbose.tokens_predicted"));
        post("/v1/completions", "{\"prompt\":\"Once upon\",\"max_tokens\":2}").then().statusCode(200)
                .body("__verbose.prompt", equalTo("<s> Once upon"))
                .body("__verbose.generation_settings.n_predict", equalTo(2));
        // A stream's chunks stay OpenAI's.
        String stream = post("/v1/chat/completions", "{" + messages + ",\"max_tokens\":2,\"stream\":true}").asString();
        assertFalse(stream.contains("__verbose"), stream);
    }

    @Test
    void responseFieldsKeepOnlyTheFieldsNamedEachUnderItsPath() {
        JsonPath kept = post("/completion", "{\"prompt\":\"Once\",\"n_predict\":3,\"response_fields\":[\"content\","
                + "\"generation_settings/n_predict\",\"no/such\"]}").then().statusCode(200).extract().jsonPath();
        assertEquals(Set.of("content", "generation_settings/n_predict"), kept.getMap("").keySet());
        assertEquals(3, kept.getInt("'generation_settings/n_predict'"));
        post("/completion", "{\"prompt\":\"Once\",\"response_fields\":\"content\"}").then().statusCode(400)
                .body("error.param", equalTo("response_fields"));
        post("/v1/completions", "{\"prompt\":\"Once\",\"response_fields\":[\"content\"]}").then().statusCode(400)
                .body("error.param", equalTo("response_fields"));
    }

    @Test
    void generationSettingsListTheLogitBiasesByToken() {
        post("/completion", "{\"prompt\":\"Once\",\"n_predict\":1,\"logit_bias\":[[7,-2.5],[5,false]]}").then()
                .statusCode(200)
                .body("generation_settings.logit_bias.token", equalTo(List.of(5, 7)))
                .body("generation_settings.logit_bias.bias", equalTo(List.of(-100f, -2.5f)));
        // ignore_eos: the end-of-text token (2 in this vocabulary) at negative infinity, written as null.
        JsonPath ignoring = post("/completion", "{\"prompt\":\"Once\",\"n_predict\":1,\"ignore_eos\":true,"
                + "\"logit_bias\":[[7,-2.5]]}").then().statusCode(200).extract().jsonPath();
        assertEquals(List.of(2, 7), ignoring.getList("generation_settings.logit_bias.token"));
        assertEquals(java.util.Arrays.asList(null, -2.5f), ignoring.getList("generation_settings.logit_bias.bias"));
    }

    @Test
    void aCompletionAnswersInLlamaServersShape() {
        JsonPath limit = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":8}").then()
                .statusCode(200)
                .body("stop", equalTo(true))
                .body("stop_type", equalTo("limit"))
                .body("stopping_word", equalTo(""))
                .body("tokens", hasSize(0))
                .body("tokens_predicted", equalTo(8))
                .body("timings.predicted_n", equalTo(8))
                .body("generation_settings.n_predict", equalTo(8))
                .body("generation_settings.seed", equalTo(42))
                .body("generation_settings.temperature", equalTo(0.8f))
                .body("generation_settings.logit_bias", hasSize(0))
                .body("model", equalTo(StoriesProfile.ALIAS))
                .body("prompt", equalTo("<s> Once upon a time"))
                .extract().jsonPath();
        int prompt = given().contentType("application/json").body("{\"content\":\"Once upon a time\","
                + "\"add_special\":true}").post("/tokenize").then().extract().jsonPath().getList("tokens").size();
        assertEquals(prompt, limit.getInt("tokens_evaluated"));
        assertEquals(limit.getString("content").contains("\n"), limit.getBoolean("has_new_line"));
        // The server's --n-predict is the budget of a request that gives none.
        post("/completion", "{\"prompt\":\"Once upon a time\",\"ignore_eos\":true}").then().statusCode(200)
                .body("tokens_predicted", equalTo(64));
        String word = limit.getString("content").trim().split(" ")[0];
        post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":8,\"stop\":[\"" + word + "\"]}").then()
                .statusCode(200)
                .body("stop_type", equalTo("word"))
                .body("stopping_word", equalTo(word))
                .body("content", equalTo(limit.getString("content").substring(0, limit.getString("content")
                        .indexOf(word))));
    }

    /** Streamed: partial objects with their tokens, the last one whole, no [DONE]; the text is the whole answer's. */
    @Test
    void aStreamedCompletionCarriesTokensAndEndsWithTheWholeObject() {
        String request = "{\"prompt\":\"I believe the meaning of life is\",\"n_predict\":16,\"seed\":5";
        String whole = post("/completion", request + "}").then().statusCode(200).extract().path("content");
        String body = post("/completion", request + ",\"stream\":true}").then().statusCode(200).extract().asString();
        List<String> payloads = ServerSentEvents.payloads(body);
        assertFalse(payloads.contains("[DONE]"));
        StringBuilder text = new StringBuilder();
        int tokens = 0;
        for (String payload : payloads.subList(0, payloads.size() - 1)) {
            JsonPath chunk = new JsonPath(payload);
            assertFalse(chunk.getBoolean("stop"));
            assertFalse(chunk.getList("tokens").isEmpty(), payload);
            tokens += chunk.getList("tokens").size();
            text.append(chunk.getString("content"));
        }
        JsonPath last = new JsonPath(payloads.get(payloads.size() - 1));
        assertTrue(last.getBoolean("stop"));
        assertEquals("limit", last.getString("stop_type"));
        assertEquals(16, last.getInt("timings.predicted_n"));
        assertEquals(16, tokens);
        assertEquals(whole, text.toString());
    }

    /**
     * {@code return_progress} streams the prompt's progress before its first chunk is computed and after each one (the
     * engine's batch is 128 rows), never going back, ending at the whole prompt; {@code timings_per_token} puts the
     * running timings on every chunk, the generated count rising token by token. The same prompt again is served from
     * the cache but its last token. Anthropic's Messages, which has no such events, refuses both.
     */
    @Test
    void aStreamReportsThePromptsProgressAndRunningTimings() {
        String prompt = "the quick brown fox jumps over the lazy dog ".repeat(6);
        // The completion's prompt starts with the model's BOS token, which /tokenize leaves out.
        int total = 1 + (int) given().contentType("application/json").body("{\"content\":\"" + prompt + "\"}")
                .post("/tokenize").then().statusCode(200).extract().path("tokens.size()");
        assertTrue(total > 128, "a prompt of several chunks: " + total);
        String request = "{\"prompt\":\"" + prompt + "\",\"n_predict\":6,\"temperature\":0,\"stream\":true,"
                + "\"return_progress\":true,\"timings_per_token\":true,\"cache_prompt\":false}";
        List<JsonPath> chunks = ServerSentEvents.payloads(post("/completion", request).then().statusCode(200)
                .extract().asString()).stream().map(JsonPath::new).toList();
        List<JsonPath> progress = chunks.stream().filter(c -> c.get("prompt_progress") != null).toList();
        assertEquals(1 + (total + 127) / 128, progress.size(), "one report before the prompt and one per chunk");
        assertEquals(0, progress.get(0).getInt("prompt_progress.processed"));
        assertEquals(0, progress.get(0).getInt("timings.prompt_n"));
        int processed = -1;
        for (JsonPath p : progress) {
            assertEquals(total, p.getInt("prompt_progress.total"));
            assertEquals(0, p.getInt("prompt_progress.cache"));
            assertTrue(p.getInt("prompt_progress.processed") > processed);
            processed = p.getInt("prompt_progress.processed");
            assertEquals(processed, p.getInt("timings.prompt_n"));
        }
        assertEquals(total, processed);
        List<JsonPath> text = chunks.stream().filter(c -> c.get("prompt_progress") == null && !c.getBoolean("stop"))
                .toList();
        assertEquals(6, text.size());
        for (int i = 0; i < text.size(); i++) {
            assertEquals(i + 1, text.get(i).getInt("timings.predicted_n"));
            assertEquals(total, text.get(i).getInt("timings.prompt_n"));
        }

        // Again, from the cache: the first report already holds all but the last token, and one chunk follows.
        String cached = request.replace("\"cache_prompt\":false", "\"cache_prompt\":true");
        post("/completion", cached).then().statusCode(200);
        List<JsonPath> again = ServerSentEvents.payloads(post("/completion", cached).then().statusCode(200).extract()
                .asString()).stream().map(JsonPath::new).filter(c -> c.get("prompt_progress") != null).toList();
        assertEquals(2, again.size());
        assertEquals(total - 1, again.get(0).getInt("prompt_progress.cache"));
        assertEquals(total - 1, again.get(0).getInt("prompt_progress.processed"));
        assertEquals(total, again.get(1).getInt("prompt_progress.processed"));

        // Chat: the progress chunks open the choice as its first chunk does; every text chunk carries timings.
        List<JsonPath> chat = ServerSentEvents.payloads(post("/v1/chat/completions", "{\"messages\":[{\"role\":"
                + "\"user\",\"content\":\"Hello\"}],\"max_tokens\":4,\"temperature\":0,\"stream\":true,"
                + "\"return_progress\":true,\"timings_per_token\":true}").then().statusCode(200).extract().asString())
                .stream().filter(p -> !p.equals("[DONE]")).map(JsonPath::new).toList();
        assertTrue(chat.stream().anyMatch(c -> c.get("prompt_progress") != null
                && "assistant".equals(c.getString("choices[0].delta.role"))));
        assertTrue(chat.stream().filter(c -> c.getString("choices[0].delta.content") != null)
                .allMatch(c -> c.getInt("timings.predicted_n") > 0));

        post("/v1/messages", "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"Hi\"}],\"return_progress\":true}").then().statusCode(400)
                .body("error.message", org.hamcrest.Matchers.containsString("return_progress"));
    }

    /**
     * llama-server's slot actions: a stream's cache saved to a file, erased, and restored into the other stream serves
     * the same prompt there from the cache with the same answer; a save asked for while a generation runs in the stream
     * waits for it and saves what it left. File names that leave the directory, files that are not slot files and
     * streams that do not exist are refused by name.
     */
    @Test
    void aSavedStreamRestoresIntoAnotherAndServesItsPromptFromTheCache() throws Exception {
        String prompt = "{\"prompt\":\"What is the capital of France?\",\"n_predict\":12,\"temperature\":0,"
                + "\"cache_prompt\":true,\"id_slot\":";
        JsonPath first = post("/completion", prompt + "1}").then().statusCode(200).extract().jsonPath();
        int promptTokens = first.getInt("tokens_evaluated");
        int held = promptTokens + first.getInt("tokens_predicted") - 1;
        JsonPath saved = post("/slots/1?action=save", "{\"filename\":\"france.bin\"}").then().statusCode(200)
                .extract().jsonPath();
        assertEquals(held, saved.getInt("n_saved"));
        java.nio.file.Path file = StoriesProfile.LlamaServer.SLOT_DIR.resolve("france.bin");
        assertEquals(java.nio.file.Files.size(file), saved.getLong("n_written"));
        post("/slots/1?action=erase", "").then().statusCode(200).body("n_erased", equalTo(held));
        post("/slots/0?action=restore", "{\"filename\":\"france.bin\"}").then().statusCode(200)
                .body("n_restored", equalTo(held)).body("id_slot", equalTo(0));
        JsonPath again = post("/completion", prompt + "0}").then().statusCode(200).extract().jsonPath();
        assertEquals(promptTokens - 1, again.getInt("timings.cache_n"));
        assertEquals(1, again.getInt("timings.prompt_n"));
        assertEquals(first.getString("content"), again.getString("content"));
        // Erased, stream 1 computes the prompt again (all but what other conversations kept in memory share with it).
        int recomputed = post("/completion", prompt + "1}").then().statusCode(200).extract().jsonPath()
                .getInt("timings.prompt_n");
        assertTrue(recomputed > promptTokens / 2, recomputed + " of " + promptTokens);

        // A save while stream 0 generates waits for the generation and saves what it left.
        String longRequest = "{\"prompt\":\"Once upon a time\",\"n_predict\":120,\"temperature\":0,\"ignore_eos\":true,"
                + "\"id_slot\":0}";
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<JsonPath> running = pool.submit(() -> post("/completion", longRequest).then().statusCode(200)
                    .extract().jsonPath());
            Thread.sleep(150);
            JsonPath during = post("/slots/0?action=save", "{\"filename\":\"story.bin\"}").then().statusCode(200)
                    .extract().jsonPath();
            JsonPath story = running.get();
            assertEquals(story.getInt("tokens_evaluated") + 120 - 1, during.getInt("n_saved"));
        } finally {
            pool.shutdownNow();
        }

        for (String bad : List.of("../escape.bin", "a/b.bin", "..", "trailing.", " lead", "x\\u0000y", "")) {
            post("/slots/0?action=save", "{\"filename\":\"" + bad + "\"}").then().statusCode(400)
                    .body("error.param", equalTo("filename"));
        }
        assertFalse(java.nio.file.Files.exists(StoriesProfile.LlamaServer.SLOT_DIR.resolveSibling("escape.bin")));
        java.nio.file.Files.writeString(StoriesProfile.LlamaServer.SLOT_DIR.resolve("notes.txt"), "notes of the day, not a slot file");
        post("/slots/0?action=restore", "{\"filename\":\"notes.txt\"}").then().statusCode(400)
                .body("error.message", org.hamcrest.Matchers.containsString("is not a slot file"));
        post("/slots/0?action=restore", "{\"filename\":\"missing.bin\"}").then().statusCode(400)
                .body("error.message", org.hamcrest.Matchers.containsString("no slot file missing.bin"));
        post("/slots/5?action=erase", "").then().statusCode(400).body("error.message",
                org.hamcrest.Matchers.containsString("no stream 5"));
        post("/slots/0?action=compact", "").then().statusCode(400).body("error.param", equalTo("action"));
        post("/completion", prompt + "9}").then().statusCode(400).body("error.param", equalTo("id_slot"));
        // The failed restore left stream 0 empty, and it serves as before; the prompt it held before the long
        // generation overwrote it comes back from the host-memory cache (--cache-ram).
        JsonPath after = post("/completion", prompt + "0}").then().statusCode(200).extract().jsonPath();
        assertEquals(first.getString("content"), after.getString("content"));
        assertEquals(promptTokens - 1, after.getInt("timings.cache_n"));
        assertEquals(1, after.getInt("timings.prompt_n"));
    }

    /**
     * Embeddings through OpenAI's Node SDK (base64 by default, which it decodes, and floats) are the vectors the
     * server gives over plain HTTP, of unit length; llama-server's own /embeddings shape; several clients at once, on
     * the two streams beside a generation, each get the vectors they get alone. Bad inputs are refused by name.
     */
    @Test
    void embeddingsAnswerOpenAisSdkAndManyClientsAtOnce() throws Exception {
        String inputs = "[\"Once upon a time\",\"The little dog ran to the park and played.\"]";
        JsonNode alone = JSON.readTree(post("/v1/embeddings", "{\"input\":" + inputs + "}").then().statusCode(200)
                .extract().asString());
        assertEquals(21, alone.path("usage").path("prompt_tokens").asInt());
        for (JsonNode item : alone.get("data")) {
            double sum = 0;
            for (JsonNode x : item.get("embedding")) {
                sum += x.asDouble() * x.asDouble();
            }
            assertEquals(1.0, sum, 1e-4);
        }
        NodeSdk.Run sdk = NodeSdk.embeddings(server.toString() + "v1", StoriesProfile.ALIAS, inputs);
        assertEquals(0, sdk.exitCode(), sdk.output());
        JsonNode seen = JSON.readTree(sdk.output().lines().reduce((a, b) -> b).orElseThrow());
        for (String form : List.of("base64", "float")) {
            for (int i = 0; i < 2; i++) {
                JsonNode got = seen.get(form).get(i);
                JsonNode want = alone.get("data").get(i).get("embedding");
                assertEquals(want.size(), got.size());
                assertClose(want, got);
            }
        }
        JsonNode native1 = JSON.readTree(post("/embeddings", "{\"content\":\"Once upon a time\"}").then()
                .statusCode(200).extract().asString());
        // Rows computed beside other rows differ from rows alone in the last bits of their sums.
        assertClose(alone.get("data").get(0).get("embedding"), native1.get(0).get("embedding").get(0));

        ExecutorService clients = Executors.newFixedThreadPool(5);
        try {
            List<Future<String>> runs = new ArrayList<>();
            runs.add(clients.submit(() -> post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":40,"
                    + "\"temperature\":0}").then().statusCode(200).extract().path("content")));
            for (int c = 0; c < 4; c++) {
                runs.add(clients.submit(() -> post("/v1/embeddings", "{\"input\":" + inputs + "}").then()
                        .statusCode(200).extract().asString()));
            }
            String story = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":40,"
                    + "\"temperature\":0}").then().statusCode(200).extract().path("content");
            assertEquals(story, runs.get(0).get());
            for (Future<String> run : runs.subList(1, runs.size())) {
                JsonNode got = JSON.readTree(run.get()).get("data");
                for (int i = 0; i < 2; i++) {
                    assertClose(alone.get("data").get(i).get("embedding"), got.get(i).get("embedding"));
                }
            }
        } finally {
            clients.shutdownNow();
        }

        post("/v1/embeddings", "{\"input\":\"\"}").then().statusCode(400).body("error.param", equalTo("input"));
        post("/v1/embeddings", "{\"input\":[]}").then().statusCode(400).body("error.param", equalTo("input"));
        post("/v1/embeddings", "{\"input\":[1, 99999]}").then().statusCode(400).body("error.param",
                equalTo("input"));
        post("/v1/embeddings", "{\"input\":\"x\",\"encoding_format\":\"int8\"}").then().statusCode(400)
                .body("error.param", equalTo("encoding_format"));
        post("/v1/embeddings", "{\"input\":\"x\",\"dimensions\":8}").then().statusCode(400)
                .body("error.param", equalTo("dimensions"));
        post("/v1/embeddings", "{\"input\":\"x\",\"truncate\":true}").then().statusCode(400)
                .body("error.param", equalTo("truncate"));
        post("/v1/embeddings", "{\"input\":\"" + "word ".repeat(2100) + "\"}").then().statusCode(400)
                .body("error.code", equalTo("context_length_exceeded"));
    }

    private static void assertClose(JsonNode want, JsonNode got) {
        assertEquals(want.size(), got.size());
        for (int d = 0; d < want.size(); d++) {
            assertEquals(want.get(d).asDouble(), got.get(d).asDouble(), 1e-5, "dimension " + d);
        }
    }

    /** Several prompts give a list, in order; token ids, text and {"prompt_string"} are the same prompt. */
    @Test
    void severalPromptsGiveAListAndIdsAndTextsMix() {
        List<Integer> ids = given().contentType("application/json").body("{\"content\":\"Once upon a time\","
                + "\"add_special\":true}").post("/tokenize").then().extract().jsonPath().getList("tokens");
        JsonPath list = post("/completion", "{\"prompt\":[" + ids + ",\"Once upon a time\",{\"prompt_string\":"
                + "\"Once upon a time\"}],\"n_predict\":8,\"temperature\":0}").then().statusCode(200)
                .extract().jsonPath();
        assertEquals(3, list.getList("$").size());
        assertEquals(list.getString("[0].content"), list.getString("[1].content"));
        assertEquals(list.getString("[0].content"), list.getString("[2].content"));
        assertEquals(List.of(0, 1, 2), list.getList("index"));
        // One sequence of ids and texts: the text tokenized where it stands, after the ids.
        List<Integer> head = ids.subList(0, 3);
        String rest = given().contentType("application/json").body("{\"tokens\":" + ids.subList(3, ids.size())
                + "}").post("/detokenize").then().extract().path("content");
        post("/completion", "{\"prompt\":[" + head.toString().replaceAll("[\\[\\]]", "") + "," + StoriesServerTest
                .quoted(rest) + "],\"n_predict\":8,\"temperature\":0}").then().statusCode(200)
                .body("tokens_evaluated", equalTo(3 + given().contentType("application/json").body("{\"content\":"
                        + StoriesServerTest.quoted(rest) + "}").post("/tokenize").then().extract().jsonPath()
                        .getList("tokens").size()));
        post("/completion", "{\"prompt\":{\"prompt_string\":\"x\",\"multimodal_data\":[\"AAAA\"]}}").then()
                .statusCode(400).body("error.param", equalTo("prompt.multimodal_data"));
    }

    @Test
    void nProbsReportsEachTokensProbabilitiesBeforeOrAfterSampling() {
        JsonPath answer = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":4,\"n_probs\":3,"
                + "\"temperature\":0}").then().statusCode(200).extract().jsonPath();
        List<Object> probabilities = answer.getList("completion_probabilities");
        assertEquals(4, probabilities.size());
        for (int i = 0; i < 4; i++) {
            assertEquals(3, answer.getList("completion_probabilities[" + i + "].top_logprobs").size());
            // Greedy: the chosen token is the most likely one.
            assertEquals(answer.getInt("completion_probabilities[" + i + "].id"),
                    answer.getInt("completion_probabilities[" + i + "].top_logprobs[0].id"));
            assertTrue(answer.getFloat("completion_probabilities[" + i + "].logprob") <= 0);
        }
        // post_sampling_probs: the distribution each token was drawn from. With top_k 5 it holds at most five
        // tokens, whose probabilities sum to one; the chosen token is among them; greedy, it alone, at 1.
        JsonPath drawn = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":5,\"n_probs\":10,"
                + "\"temperature\":1,\"top_k\":5,\"top_p\":1,\"min_p\":0,\"seed\":3,\"post_sampling_probs\":true}")
                .then().statusCode(200).extract().jsonPath();
        for (int i = 0; i < 5; i++) {
            String at = "completion_probabilities[" + i + "].";
            List<Float> probs = drawn.getList(at + "top_probs.prob", Float.class);
            assertTrue(probs.size() >= 1 && probs.size() <= 5, probs.toString());
            assertEquals(1.0, probs.stream().mapToDouble(Float::doubleValue).sum(), 1e-4);
            assertTrue(probs.stream().allMatch(p -> p > 0 && p <= 1));
            int chosen = drawn.getInt(at + "id");
            int place = drawn.getList(at + "top_probs.id", Integer.class).indexOf(chosen);
            assertTrue(place >= 0, "the chosen token is among those it was drawn from");
            assertEquals(probs.get(place), drawn.getFloat(at + "prob"), 1e-6);
            assertTrue(drawn.get(at + "logprob") == null, "no logprob beside prob");
        }
        JsonPath greedy = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":2,\"n_probs\":3,"
                + "\"temperature\":0,\"post_sampling_probs\":true}").then().statusCode(200).extract().jsonPath();
        assertEquals(1.0f, greedy.getFloat("completion_probabilities[0].prob"));
        assertEquals(1, greedy.getList("completion_probabilities[0].top_probs").size());
        post("/v1/completions", "{\"prompt\":\"x\",\"logprobs\":3,\"post_sampling_probs\":true}").then()
                .statusCode(400).body("error.param", equalTo("post_sampling_probs"));
        // OpenAI's endpoints spell it otherwise, and say so.
        post("/v1/completions", "{\"prompt\":\"x\",\"n_probs\":3}").then().statusCode(400)
                .body("error.param", equalTo("n_probs"));
    }

    /** cache_prompt false computes the whole prompt again, where the same request otherwise reuses the cache. */
    @Test
    void cachePromptFalseComputesThePromptAfresh() {
        String prompt = "\"prompt\":\"The little dog ran to the park and saw a big red ball\",\"n_predict\":2";
        int all = post("/completion", "{" + prompt + "}").then().statusCode(200).extract().path("tokens_evaluated");
        post("/completion", "{" + prompt + "}").then().statusCode(200)
                .body("timings.cache_n", equalTo(all - 1))
                .body("timings.prompt_n", equalTo(1));
        post("/completion", "{" + prompt + ",\"cache_prompt\":false}").then().statusCode(200)
                .body("timings.cache_n", equalTo(0))
                .body("timings.prompt_n", equalTo(all));
    }

    @Test
    void propsSlotsModelsAndHealthAnswerAsLlamaServers() {
        given().get("/props").then().statusCode(200)
                .body("total_slots", equalTo(2))
                .body("model_path", equalTo("stories260K.gguf"))
                .body("default_generation_settings.params.seed", equalTo(42))
                .body("default_generation_settings.params.n_predict", equalTo(64));
        int ctx = given().get("/props").then().extract().path("default_generation_settings.n_ctx");
        given().contentType("application/json").body("{}").post("/props").then().statusCode(501);
        given().get("/slots").then().statusCode(200)
                .body("$", hasSize(2))
                .body("[0].n_ctx", equalTo(ctx))
                .body("[1].is_processing", equalTo(false));
        given().get("/models").then().statusCode(200).body("data[0].id", equalTo(StoriesProfile.ALIAS));
        given().get("/v1/health").then().statusCode(200).body("status", equalTo("ok"));
        // With --accept-any-model, a request that names another model is answered by the served one.
        post("/chat/completions", "{\"model\":\"gpt-3.5-turbo\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "\"hi\"}],\"max_tokens\":2}").then().statusCode(200)
                .body("model", equalTo(StoriesProfile.ALIAS));
    }

    /** Two different seeds at temperature 1 give two different answers; the same seed the same one. */
    @Test
    void aSeedDecidesTheAnswer() {
        List<String> answers = new ArrayList<>();
        for (int seed : new int[]{1, 2, 1}) {
            answers.add(post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":16,\"temperature\":1,"
                    + "\"seed\":" + seed + "}").then().statusCode(200).extract().path("content"));
        }
        assertNotEquals(answers.get(0), answers.get(1));
        assertEquals(answers.get(0), answers.get(2));
    }

    /**
     * Anthropic's Messages and OpenAI's Responses on the real model: the same greedy answer as chat, in each API's
     * shape, whole and streamed; count_tokens counts the prompt the chat template renders.
     */
    @Test
    void messagesAndResponsesGiveTheChatAnswerInTheirShapes() {
        String chat = post("/v1/chat/completions", "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":12,\"temperature\":0}").then()
                .statusCode(200).extract().path("choices[0].message.content");
        post("/v1/messages", "{\"model\":\"claude\",\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}]}],\"max_tokens\":12,\"temperature\":0}")
                .then().statusCode(200)
                .body("type", equalTo("message"))
                .body("role", equalTo("assistant"))
                .body("content[0].type", equalTo("text"))
                .body("content[0].text", equalTo(chat))
                .body("stop_reason", equalTo("max_tokens"))
                .body("usage.output_tokens", equalTo(12))
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("timings")));
        String body = post("/v1/messages", "{\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Hello\"}],\"max_tokens\":12,\"temperature\":0,\"stream\":true}").then()
                .statusCode(200).extract().asString();
        StringBuilder text = new StringBuilder();
        List<String> names = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            String[] lines = event.split("\n");
            assertTrue(lines[0].startsWith("event: ") && lines[1].startsWith("data: "), event);
            JsonPath data = new JsonPath(lines[1].substring(6));
            assertEquals(lines[0].substring(7), data.getString("type"));
            names.add(data.getString("type"));
            if ("text_delta".equals(data.getString("delta.type"))) {
                text.append(data.getString("delta.text"));
            }
        }
        assertEquals(List.of("message_start", "content_block_start"), names.subList(0, 2));
        assertEquals(List.of("content_block_stop", "message_delta", "message_stop"),
                names.subList(names.size() - 3, names.size()));
        assertEquals(chat, text.toString());
        int rendered = given().contentType("application/json").body("{\"content\":" + StoriesServerTest.quoted(
                given().contentType("application/json").body("{\"messages\":[{\"role\":\"system\",\"content\":"
                        + "\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hello\"}]}").post("/apply-template")
                        .then().extract().path("prompt")) + ",\"add_special\":true}").post("/tokenize").then()
                .extract().jsonPath().getList("tokens").size();
        post("/v1/messages/count_tokens", "{\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Hello\"}]}").then().statusCode(200).body("input_tokens", equalTo(rendered));
        post("/v1/messages", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}").then().statusCode(400)
                .body("type", equalTo("error"))
                .body("error.type", equalTo("invalid_request_error"))
                .body("error.message", org.hamcrest.Matchers.containsString("max_tokens"));
        post("/v1/responses", "{\"instructions\":\"Be brief.\",\"input\":\"Hello\",\"max_output_tokens\":12,"
                + "\"temperature\":0}").then().statusCode(200)
                .body("object", equalTo("response"))
                .body("status", equalTo("incomplete"))
                .body("incomplete_details.reason", equalTo("max_output_tokens"))
                .body("output[0].type", equalTo("message"))
                .body("output[0].content[0].text", equalTo(chat))
                .body("output_text", equalTo(chat))
                .body("usage.output_tokens", equalTo(12));
        post("/v1/responses", "{\"input\":\"Hello\",\"previous_response_id\":\"resp_1\"}").then().statusCode(400)
                .body("error.param", equalTo("previous_response_id"));
    }
}
