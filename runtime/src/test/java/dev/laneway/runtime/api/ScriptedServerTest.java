package dev.laneway.runtime.api;

import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GenerationResult;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP layer against a {@link ScriptedModel}, whose tokens the tests choose: SSE framing, UTF-8 assembly, stop
 * strings split across tokens, logprob shapes, device faults, disconnects and the queue.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.class)
class ScriptedServerTest {
    @TestHTTPResource("/")
    URL server;

    @BeforeEach
    void clear() throws InterruptedException {
        StoriesProfile.awaitReady();
        ScriptedModel.FINISHED.clear();
    }

    static Response post(String path, String json) {
        return given().contentType("application/json").body(json).post(path);
    }

    /**
     * Bound to loopback, the server answers requests to loopback names only: a page that rebinds a name of its own to
     * 127.0.0.1 gets a 403 naming its Host, on any path, before the handlers (or the model) see it.
     */
    @Test
    void onALoopbackBindRequestsToOtherHostsAreRefused() throws Exception {
        for (String host : List.of("evil.example", "evil.example:" + server.getPort(), "10.1.2.3",
                "localhost.evil.example", "127.0.0.1.nip.io")) {
            String answer = raw("POST /v1/completions", host, "{\"prompt\":\"say:Hello\"}");
            assertTrue(answer.startsWith("HTTP/1.1 403"), host + ": " + answer);
            assertTrue(answer.contains("\"code\":\"host_not_allowed\"") && answer.contains("'" + host + "'"), answer);
            assertTrue(raw("GET /v1/models", host, null).startsWith("HTTP/1.1 403"), host);
        }
        for (String host : List.of("localhost", "localhost:" + server.getPort(), "127.0.0.1:" + server.getPort(),
                "127.1.2.3", "[::1]:" + server.getPort(), "LOCALHOST")) {
            assertTrue(raw("GET /v1/models", host, null).startsWith("HTTP/1.1 200"), host);
        }
    }

    /**
     * Every count and size a client chooses is bounded: one over its bound is a 400 naming the field, a body over
     * the server's limit a 413 and a header over it a 431, and the server goes on answering.
     */
    @Test
    void requestsOverTheirBoundsAreRefusedNamingWhatIsOver() throws Exception {
        String message = "{\"role\":\"user\",\"content\":\"say:Hi\"}";
        String tool = "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}";
        java.util.Map<String, String> over = new java.util.LinkedHashMap<>();
        over.put("messages", "{\"messages\":[" + repeat(message, RequestBounds.MESSAGES + 1) + "]}");
        over.put("tools", "{\"messages\":[" + message + "],\"tools\":[" + repeat(tool, RequestBounds.TOOLS + 1)
                + "]}");
        over.put("stop", "{\"messages\":[" + message + "],\"stop\":[" + repeat("\"x\"", RequestBounds.STOPS + 1)
                + "]}");
        over.put("stop ", "{\"messages\":[" + message + "],\"stop\":\"" + "x".repeat(RequestBounds.STOP_CHARS + 1)
                + "\"}");
        StringBuilder bias = new StringBuilder();
        for (int i = 0; i <= RequestBounds.LOGIT_BIASES; i++) {
            bias.append(i == 0 ? "" : ",").append("\"").append(i).append("\":1");
        }
        over.put("logit_bias", "{\"messages\":[" + message + "],\"logit_bias\":{" + bias + "}}");
        over.put("json_schema", "{\"messages\":[" + message + "],\"json_schema\":{\"description\":\""
                + "x".repeat(RequestBounds.GRAMMAR_CHARS) + "\"}}");
        over.put("grammar", "{\"messages\":[" + message + "],\"grammar\":\"root ::= \\\"" + "x".repeat(
                RequestBounds.GRAMMAR_CHARS) + "\\\"\"}");
        over.put("n", "{\"messages\":[" + message + "],\"n\":" + (RequestBounds.N + 1) + "}");
        over.put("cache_salt", "{\"messages\":[" + message + "],\"cache_salt\":\""
                + "s".repeat(RequestBounds.SALT_CHARS + 1) + "\"}");
        for (var e : over.entrySet()) {
            String field = e.getKey().strip();
            post("/v1/chat/completions", e.getValue()).then().statusCode(400)
                    .body("error.param", equalTo(field))
                    .body("error.message", org.hamcrest.Matchers.containsString(field));
        }
        post("/v1/completions", "{\"prompt\":[" + repeat("\"say:a\"", RequestBounds.PROMPTS + 1) + "]}").then()
                .statusCode(400).body("error.param", equalTo("prompt"));

        try (Socket socket = new Socket(server.getHost(), server.getPort())) {
            socket.setSoTimeout(10_000);
            // the server answers from the declared length, without reading the body, and may close the connection
            // before the client has written all it sends: the answer is read all the same
            try {
                socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type:"
                        + " application/json\r\nContent-Length: " + 11 * 1024 * 1024 + "\r\n\r\n{\"prompt\":\"")
                        .getBytes(StandardCharsets.US_ASCII));
            } catch (java.net.SocketException closedEarly) {
                // the server has answered and closed; its answer waits in the socket
            }
            String answer = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 413", answer, "a body over the limit");
        }
        assertEquals(431, given().header("X-Filler", "y".repeat(32 * 1024)).get("/v1/models").statusCode(),
                "a header over the limit");
        post("/v1/completions", "{\"prompt\":\"say:Hello\"}").then().statusCode(200)
                .body("choices[0].text", equalTo("Hello"));
    }

    private static String repeat(String item, int times) {
        return String.join(",", java.util.Collections.nCopies(times, item));
    }

    /** Without an allow-list no page of another origin may read an answer: no CORS header, preflight or not. */
    @Test
    void corsIsOffByDefault() {
        given().header("Origin", "http://localhost:3000").get("/v1/models").then().statusCode(200)
                .header("Access-Control-Allow-Origin", nullValue());
        Response preflight = given().header("Origin", "http://localhost:3000")
                .header("Access-Control-Request-Method", "POST").options("/v1/completions");
        assertNull(preflight.header("Access-Control-Allow-Origin"), preflight.asString());
        assertNull(preflight.header("Access-Control-Allow-Methods"), preflight.asString());
    }

    /** One request over a fresh connection, with the given Host header; the whole answer. */
    private String raw(String requestLine, String host, String body) throws Exception {
        try (Socket socket = new Socket(server.getHost(), server.getPort())) {
            socket.setSoTimeout(10_000);
            String head = requestLine + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
                    + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + body.length()
                    + "\r\n") + "\r\n" + (body == null ? "" : body);
            socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void completesWithTheScriptedTextUsageAndTimings() {
        post("/v1/completions", "{\"prompt\":\"say:Hello\",\"temperature\":0}").then()
                .statusCode(200)
                .contentType(startsWith("application/json"))
                .body("id", startsWith("cmpl-"))
                .body("object", equalTo("text_completion"))
                .body("model", equalTo(ScriptedModel.ID))
                .body("choices", hasSize(1))
                .body("choices[0].text", equalTo("Hello"))
                .body("choices[0].index", equalTo(0))
                .body("choices[0].finish_reason", equalTo("stop"))
                .body("choices[0].logprobs", nullValue())
                // <s> and the 9 bytes of "say:Hello"; 5 generated
                .body("usage.prompt_tokens", equalTo(10))
                .body("usage.completion_tokens", equalTo(5))
                .body("usage.total_tokens", equalTo(15))
                .body("timings.prompt_n", equalTo(10))
                .body("timings.predicted_n", equalTo(5))
                .body("timings.predicted_ms", equalTo(5.0f))
                // the first token comes with the prompt: 4 decode steps in 5 ms
                .body("timings.predicted_per_token_ms", equalTo(1.25f))
                .body("timings.predicted_per_second", equalTo(800.0f));
    }

    @Test
    void streamsChunksThatConcatenateToTheText() {
        Response response = post("/v1/completions", "{\"prompt\":\"say:Hello\",\"stream\":true}");
        response.then().statusCode(200).contentType(startsWith("text/event-stream"));
        List<JsonPath> chunks = ServerSentEvents.chunks(response.asString());
        assertEquals("Hello", ServerSentEvents.text(chunks));
        JsonPath last = chunks.get(chunks.size() - 1);
        assertEquals("stop", last.getString("choices[0].finish_reason"));
        assertNotNull(last.get("timings.predicted_n"), "the last chunk carries the timings");
        for (JsonPath chunk : chunks.subList(0, chunks.size() - 1)) {
            assertEquals("text_completion", chunk.getString("object"));
            assertEquals(chunks.get(0).getString("id"), chunk.getString("id"), "one id for the whole stream");
            assertNull(chunk.get("choices[0].finish_reason"));
            assertNull(chunk.get("usage"), "no usage before the end");
        }
    }

    @Test
    void streamsOnlyCompleteUtf8Characters() {
        String text = "h\u00e9llo \u2192 \u00fc\uD83D\uDE00!";
        Response response = post("/v1/completions", "{\"prompt\":\"say:" + text + "\",\"stream\":true}");
        List<JsonPath> chunks = ServerSentEvents.chunks(response.asString());
        for (JsonPath chunk : chunks) {
            String piece = chunk.getString("choices[0].text");
            assertFalse(piece != null && piece.contains("\uFFFD"), "no chunk holds a broken character: " + piece);
        }
        assertEquals(text, ServerSentEvents.text(chunks));
        // The 4-byte emoji arrives in one chunk, whole.
        assertTrue(chunks.stream().anyMatch(c -> "\uD83D\uDE00".equals(c.getString("choices[0].text"))));
    }

    @Test
    void stopsAtAStopStringSplitAcrossTokens() {
        // Every byte is a token, so "world." spans six tokens.
        String body = "{\"prompt\":\"say:Hello world. Bye\",\"stop\":[\"xyz\",\"world.\"]";
        post("/v1/completions", body + "}").then()
                .statusCode(200)
                .body("choices[0].text", equalTo("Hello "))
                .body("choices[0].finish_reason", equalTo("stop"))
                .body("usage.completion_tokens", equalTo(12));
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/completions", body + ",\"stream\":true}").asString());
        assertEquals("Hello ", ServerSentEvents.text(chunks));
        for (JsonPath chunk : chunks) {
            String piece = chunk.getString("choices[0].text");
            assertFalse(piece != null && piece.contains("w"), "no part of the stop string is ever sent: " + piece);
        }
    }

    @Test
    void releasesHeldBackTextThatDidNotBecomeAStopString() {
        post("/v1/completions", "{\"prompt\":\"say:abcabd\",\"stop\":\"abx\"}").then()
                .body("choices[0].text", equalTo("abcabd"));
        List<JsonPath> chunks = ServerSentEvents.chunks(
                post("/v1/completions", "{\"prompt\":\"say:abcabd\",\"stop\":\"abx\",\"stream\":true}").asString());
        assertEquals("abcabd", ServerSentEvents.text(chunks));
        post("/v1/completions", "{\"prompt\":\"say:abcabd\",\"stop\":\"cab\"}").then()
                .body("choices[0].text", equalTo("ab"));
    }

    @Test
    void endsWithLengthWhenMaxTokensRunsOut() {
        post("/v1/completions", "{\"prompt\":\"say:Hello\",\"max_tokens\":3}").then()
                .statusCode(200)
                .body("choices[0].text", equalTo("Hel"))
                .body("choices[0].finish_reason", equalTo("length"))
                .body("usage.completion_tokens", equalTo(3));
    }

    @Test
    void answersEveryPromptWithNChoices() {
        post("/v1/completions", "{\"prompt\":[\"say:A\",[256,115,97,121,58,66]],\"n\":2}").then()
                .statusCode(200)
                .body("choices", hasSize(4))
                .body("choices.index", equalTo(List.of(0, 1, 2, 3)))
                .body("choices.text", equalTo(List.of("A", "A", "B", "B")))
                .body("usage.prompt_tokens", equalTo(12))
                .body("usage.completion_tokens", equalTo(4));
    }

    @Test
    void reportsLegacyLogprobsForCompletions() {
        JsonPath json = post("/v1/completions", "{\"prompt\":\"say:ab\",\"logprobs\":2}").then().statusCode(200)
                .extract().jsonPath();
        assertEquals(List.of("a", "b"), json.getList("choices[0].logprobs.tokens"));
        assertEquals(List.of(-0.25f, -0.25f), json.getList("choices[0].logprobs.token_logprobs"));
        assertEquals(List.of(0, 1), json.getList("choices[0].logprobs.text_offset"));
        // The top two, "a" (the chosen one) and "b", at the first position.
        assertEquals(-0.25f, json.getFloat("choices[0].logprobs.top_logprobs[0].a"));
        assertEquals(-0.75f, json.getFloat("choices[0].logprobs.top_logprobs[0].b"));
        assertEquals(2, json.getMap("choices[0].logprobs.top_logprobs[0]").size());
    }

    @Test
    void reportsChatLogprobsPerToken() {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"say:\u00e9\"}],\"logprobs\":true,\"top_logprobs\":1}";
        JsonPath json = post("/v1/chat/completions", body).then().statusCode(200).extract().jsonPath();
        assertEquals("\u00e9", json.getString("choices[0].message.content"));
        // Two byte tokens make the one character; alone, each token's text is a replacement character.
        assertEquals(2, json.getList("choices[0].logprobs.content").size());
        assertEquals("\uFFFD", json.getString("choices[0].logprobs.content[0].token"));
        assertEquals(List.of(0xef, 0xbf, 0xbd), json.getList("choices[0].logprobs.content[0].bytes"));
        assertEquals(-0.25f, json.getFloat("choices[0].logprobs.content[0].logprob"));
        assertEquals(1, json.getList("choices[0].logprobs.content[0].top_logprobs").size());
    }

    @Test
    void chatStreamOpensWithTheRoleAndEndsWithUsage() {
        String body = "{\"model\":\"scripted\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"say:Hi\"}]}],"
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/chat/completions", body).asString());
        JsonPath first = chunks.get(0);
        assertEquals("chat.completion.chunk", first.getString("object"));
        assertTrue(first.getString("id").startsWith("chatcmpl-"));
        assertEquals("assistant", first.getString("choices[0].delta.role"));
        assertEquals("Hi", ServerSentEvents.text(chunks));
        JsonPath closing = chunks.get(chunks.size() - 2);
        assertEquals("stop", closing.getString("choices[0].finish_reason"));
        assertEquals(0, closing.getMap("choices[0].delta").size(), "the closing delta is empty");
        JsonPath usage = chunks.get(chunks.size() - 1);
        assertEquals(0, usage.getList("choices").size());
        assertEquals(2, usage.getInt("usage.completion_tokens"));
        assertEquals(usage.getInt("usage.prompt_tokens") + 2, usage.getInt("usage.total_tokens"));
    }

    @Test
    void chatAnswersWithAnAssistantMessage() {
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"developer\",\"content\":\"x\"},"
                + "{\"role\":\"user\",\"content\":\"say:Hi there\"}]}").then()
                .statusCode(200)
                .body("object", equalTo("chat.completion"))
                .body("choices[0].message.role", equalTo("assistant"))
                .body("choices[0].message.content", equalTo("Hi there"))
                .body("choices[0].finish_reason", equalTo("stop"))
                .body("usage.completion_tokens", equalTo(8));
    }

    private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]";
    private static final String CALLING = "say:Checking.<tool_call>{\\\"name\\\":\\\"get_weather\\\","
            + "\\\"arguments\\\":{\\\"city\\\":\\\"Paris\\\"}}</tool_call>";

    private static String chatWithTools(String content, String more) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]," + TOOLS + more + "}";
    }

    @Test
    void anAnswerThatCallsAToolComesBackAsToolCalls() {
        post("/v1/chat/completions", chatWithTools(CALLING, "")).then().statusCode(200)
                .body("choices[0].finish_reason", equalTo("tool_calls"))
                .body("choices[0].message.content", equalTo("Checking."))
                .body("choices[0].message.tool_calls[0].type", equalTo("function"))
                .body("choices[0].message.tool_calls[0].id", startsWith("call_"))
                .body("choices[0].message.tool_calls[0].function.name", equalTo("get_weather"))
                .body("choices[0].message.tool_calls[0].function.arguments", equalTo("{\"city\":\"Paris\"}"));
        // Without a call, or with a malformed one, the answer is text.
        post("/v1/chat/completions", chatWithTools("say:<tool_call>oops</tool_call>", "")).then().statusCode(200)
                .body("choices[0].finish_reason", equalTo("stop"))
                .body("choices[0].message.content", equalTo("<tool_call>oops</tool_call>"))
                .body("choices[0].message", not(hasKey("tool_calls")));
        post("/v1/chat/completions", chatWithTools(CALLING, ",\"tool_choice\":\"none\"")).then().statusCode(200)
                .body("choices[0].finish_reason", equalTo("stop"));
    }

    @Test
    void streamedToolCallsComeWholeInTheLastChunk() {
        String body = post("/v1/chat/completions", chatWithTools(CALLING, ",\"stream\":true")).then().statusCode(200)
                .extract().asString();
        List<JsonPath> chunks = ServerSentEvents.chunks(body);
        assertEquals("Checking.", ServerSentEvents.text(chunks));
        JsonPath last = chunks.get(chunks.size() - 1);
        assertEquals("tool_calls", last.getString("choices[0].finish_reason"));
        assertEquals(0, last.getInt("choices[0].delta.tool_calls[0].index"));
        assertEquals("get_weather", last.getString("choices[0].delta.tool_calls[0].function.name"));
        assertEquals("{\"city\":\"Paris\"}", last.getString("choices[0].delta.tool_calls[0].function.arguments"));
        String malformed = post("/v1/chat/completions", chatWithTools("say:a <tool_call>oops", ",\"stream\":true"))
                .then().statusCode(200).extract().asString();
        assertEquals("a <tool_call>oops", ServerSentEvents.text(ServerSentEvents.chunks(malformed)));
    }

    /**
     * The official Anthropic Node SDK on {@code /v1/messages}: a message whole and streamed, count_tokens, a tool
     * round trip whole and streamed, and a bad request read as Anthropic's error.
     */
    @Test
    void theAnthropicNodeSdkTalksToMessagesAndCallsATool() throws Exception {
        String calling = "say:<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>";
        String base = server.toString().replaceAll("/$", "");
        NodeSdk.Run run = NodeSdk.script("anthropic-sdk.mjs", base, "say:Hello there.", calling,
                "say:It is 18 degrees in Paris.", ScriptedModel.ID);
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        assertEquals("Hello there.", seen.getString("whole"));
        assertEquals("Hello there.", seen.getString("streamed"));
        for (String way : List.of("wholeTool", "streamedTool")) {
            assertEquals("Paris", seen.getString(way + ".input.city"));
            assertEquals("It is 18 degrees in Paris.", seen.getString(way + ".answer"));
        }
        assertTrue(seen.getString("error").contains("role"), seen.getString("error"));
    }

    /** The official OpenAI Node SDK on {@code /v1/responses}: whole, streamed, and a tool round trip both ways. */
    @Test
    void theOpenAiNodeSdkTalksToResponsesAndCallsATool() throws Exception {
        String calling = "say:<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>";
        NodeSdk.Run run = NodeSdk.script("openai-responses.mjs", server.toString() + "v1", "say:Hello there.",
                calling, "say:It is 18 degrees in Paris.", ScriptedModel.ID);
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        assertEquals("Hello there.", seen.getString("whole"));
        assertEquals("Hello there.", seen.getString("streamed"));
        for (String way : List.of("wholeTool", "streamedTool")) {
            assertEquals("{\"city\":\"Paris\"}", seen.getString(way + ".arguments"));
            assertEquals("It is 18 degrees in Paris.", seen.getString(way + ".answer"));
        }
    }

    @Test
    void theOpenAiNodeSdkCallsAToolAndGetsTheAnswer() throws Exception {
        String calling = "say:<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>";
        NodeSdk.Run run = NodeSdk.tools(server.toString() + "v1", calling, "say:It is 18 degrees in Paris.");
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        for (String way : List.of("whole", "streamed")) {
            assertEquals("get_weather", seen.getString(way + ".call.name"));
            assertEquals("It is 18 degrees in Paris.", seen.getString(way + ".answer"));
        }
    }

    @Test
    void aThinkingModelsReasoningComesApartFromItsAnswer() {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"say:<think>Paris is in France.</think>"
                + "It is Paris.\"}]";
        post("/v1/chat/completions", chat + "}").then().statusCode(200)
                .body("choices[0].message.reasoning_content", equalTo("Paris is in France."))
                .body("choices[0].message.content", equalTo("It is Paris."));
        post("/v1/chat/completions", chat + ",\"reasoning_format\":\"none\"}").then().statusCode(200)
                .body("choices[0].message.content", equalTo("<think>Paris is in France.</think>It is Paris."))
                .body("choices[0].message", not(hasKey("reasoning_content")));
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/chat/completions", chat + ",\"stream\":true}")
                .then().statusCode(200).extract().asString());
        StringBuilder reasoning = new StringBuilder();
        for (JsonPath chunk : chunks) {
            if (!chunk.getList("choices").isEmpty() && chunk.getString("choices[0].delta.reasoning_content") != null) {
                reasoning.append(chunk.getString("choices[0].delta.reasoning_content"));
            }
        }
        assertEquals("Paris is in France.", reasoning.toString());
        assertEquals("It is Paris.", ServerSentEvents.text(chunks));
        post("/v1/chat/completions", chat + ",\"reasoning_format\":\"hidden\"}").then().statusCode(400)
                .body("error.param", equalTo("reasoning_format"));
    }

    @Test
    void chatTemplateKwargsReachTheTemplate() {
        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
        post("/apply-template", "{" + messages + ",\"chat_template_kwargs\":{\"enable_thinking\":false}}").then()
                .statusCode(200).body("prompt", equalTo("<kwargs>{enable_thinking=false}\n<user>hi\n<assistant>"));
        post("/apply-template", "{" + messages + ",\"chat_template_kwargs\":{\"messages\":[]}}").then()
                .statusCode(400).body("error.param", equalTo("chat_template_kwargs.messages"));
        post("/v1/chat/completions", "{" + messages + ",\"chat_template_kwargs\":7}").then().statusCode(400)
                .body("error.param", equalTo("chat_template_kwargs"));
    }

    /** This model cannot constrain its output, so it refuses the tool choices that need that, by name. */
    @Test
    void toolChoicesThatNeedConstrainedDecodingAreRefusedByName() {
        post("/v1/chat/completions", chatWithTools("say:x", ",\"tool_choice\":\"required\"")).then().statusCode(400)
                .body("error.param", equalTo("tool_choice"));
        post("/v1/chat/completions", chatWithTools("say:x", ",\"tool_choice\":{\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\"}}")).then().statusCode(400)
                .body("error.param", equalTo("tool_choice"));
        post("/v1/chat/completions", chatWithTools("say:x", ",\"tool_choice\":\"sometimes\"")).then().statusCode(400)
                .body("error.param", equalTo("tool_choice"));
        post("/v1/completions", "{\"prompt\":\"say:x\"," + TOOLS + "}").then().statusCode(400)
                .body("error.param", equalTo("tools"));
        post("/v1/chat/completions", chatWithTools("say:x", ",\"logprobs\":true")).then().statusCode(400)
                .body("error.param", equalTo("logprobs"));
    }

    @Test
    void aTemplateRefusalIsAClientError() {
        post("/v1/chat/completions", "{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}").then()
                .statusCode(400)
                .body("error.param", equalTo("messages"))
                .body("error.type", equalTo("invalid_request_error"));
    }

    @Test
    void aDeviceFaultIs503WithoutDetailsOfTheServer() {
        post("/v1/completions", "{\"prompt\":\"fault:\"}").then()
                .statusCode(503)
                .body("error.type", equalTo("device_error"))
                .body("error.code", equalTo("device_fault"))
                .body("error.message", equalTo("the device scripted-npu failed this generation: kernel 'step' "
                        + "timed out at position 7"));
        // The model stays usable.
        post("/v1/completions", "{\"prompt\":\"say:ok\"}").then().statusCode(200).body("choices[0].text",
                equalTo("ok"));
    }

    @Test
    void aStreamedDeviceFaultEndsWithAnErrorEventAndNoDone() {
        List<String> payloads = ServerSentEvents.payloads(
                post("/v1/completions", "{\"prompt\":\"fault:\",\"stream\":true}").asString());
        JsonPath last = new JsonPath(payloads.get(payloads.size() - 1));
        assertEquals("device_error", last.getString("error.type"));
        assertFalse(payloads.contains("[DONE]"));
        assertEquals("ff", ServerSentEvents.text(payloads.subList(0, payloads.size() - 1).stream()
                .map(JsonPath::new).toList()));
    }

    @Test
    void aPromptThatLeavesNoRoomIsRefusedWithBothCounts() {
        String longPrompt = "x".repeat(ScriptedModel.CONTEXT);
        post("/v1/completions", "{\"prompt\":\"" + longPrompt + "\"}").then()
                .statusCode(400)
                .body("error.param", equalTo("prompt"))
                .body("error.code", equalTo("context_length_exceeded"))
                .body("error.message", equalTo("the prompt (4097 tokens) exceeds the available context size"
                        + " (4096 tokens): at least one token must stay free for the completion"));
    }

    @Test
    void clampsMaxTokensToTheContextLeft() {
        // <s>, 4084 x and "forever:" leave 3 positions.
        String prompt = "x".repeat(ScriptedModel.CONTEXT - 12) + "forever:";
        post("/v1/completions", "{\"prompt\":\"" + prompt + "\",\"max_tokens\":100}").then()
                .statusCode(200)
                .body("choices[0].finish_reason", equalTo("length"))
                .body("usage.completion_tokens", equalTo(3));
    }

    @Test
    void aClientThatDisconnectsStopsItsGenerationAndFreesTheStream() throws Exception {
        try (Socket socket = openRequest("{\"prompt\":\"forever:\",\"stream\":true}")) {
            InputStream in = socket.getInputStream();
            String seen = "";
            byte[] buffer = new byte[256];
            while (!seen.contains("data: ")) {
                int n = in.read(buffer);
                assertTrue(n > 0, "the stream started");
                seen += new String(buffer, 0, n, StandardCharsets.UTF_8);
            }
        }
        assertStoppedEarly();
        // The only stream is free again: this one runs at once rather than waiting or being refused.
        post("/v1/completions", "{\"prompt\":\"say:next\"}").then().statusCode(200)
                .body("choices[0].text", equalTo("next"));
    }

    /**
     * Hostile clients: 2,000 connections held open idle, 200 sending their headers a byte at a time and never ending
     * them, and a storm of 200 streamed requests whose clients vanish at once. Health checks answer within a second
     * throughout, every abandoned generation ends, and the server then serves a request as before.
     */
    @Test
    void healthAnswersWhileThousandsOfConnectionsIdleDripAndVanish() throws Exception {
        List<Socket> held = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 2000; i++) {
                held.add(new Socket(server.getHost(), server.getPort()));
            }
            for (int i = 0; i < 200; i++) {
                Socket drip = new Socket(server.getHost(), server.getPort());
                drip.getOutputStream().write("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
                        .getBytes(StandardCharsets.US_ASCII));
                held.add(drip);
            }
            long worst = healthMillis();
            for (int round = 0; round < 5; round++) {
                for (Socket drip : held.subList(2000, 2200)) {
                    drip.getOutputStream().write('a');
                }
                worst = Math.max(worst, healthMillis());
            }
            List<Socket> storm = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                storm.add(openRequest("{\"prompt\":\"forever:\",\"stream\":true}"));
            }
            worst = Math.max(worst, healthMillis());
            for (Socket s : storm) {
                s.setSoLinger(true, 0);  // a reset, not a polite close
                s.close();
            }
            worst = Math.max(worst, healthMillis());
            assertTrue(worst < 1000, "the slowest health check took " + worst + " ms");
            System.out.printf("hostile clients: 2,200 connections held, 200 vanished; slowest health check %d ms%n",
                    worst);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        for (int i = 0; i < 500 && !given().get("/q/metrics").asString().contains("laneway_streams_busy 0.0"); i++) {
            Thread.sleep(10);
        }
        post("/v1/completions", "{\"prompt\":\"say:after\"}").then().statusCode(200)
                .body("choices[0].text", equalTo("after"));
    }

    /** One health check's time, in milliseconds; it must answer 200. */
    private long healthMillis() {
        long start = System.nanoTime();
        given().get("/health").then().statusCode(200);
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * A client that leaves at once, perhaps before its request is admitted (it then never subscribes to the answer):
     * its generation still stops, each of ten times.
     */
    @Test
    void aClientThatLeavesAtOnceStopsItsGeneration() throws Exception {
        for (int i = 0; i < 10; i++) {
            openRequest("{\"prompt\":\"forever:\"}").close();
            // Unstopped, "forever:" runs for 4 s: it must end (or never start) well before.
            GenerationResult ended = ScriptedModel.FINISHED.poll(3, TimeUnit.SECONDS);
            if (ended != null) {
                assertEquals(FinishReason.STOPPED, ended.finish());
                assertTrue(ended.generatedTokens() < 2000, "stopped long before its budget: " + ended.generatedTokens());
            } else {
                assertTrue(given().get("/q/metrics").asString().contains("laneway_streams_busy 0.0"),
                        "no generation runs for a client that has gone");
            }
        }
    }

    @Test
    void aClientThatLeavesBeforeAWholeAnswerStopsItsGeneration() throws Exception {
        try (Socket socket = openRequest("{\"prompt\":\"forever:\"}")) {
            // Wait until the generation runs, then leave without reading.
            for (int i = 0; i < 400 && !given().get("/q/metrics").asString().contains("laneway_streams_busy 1.0"); i++) {
                Thread.sleep(10);
            }
        }
        assertStoppedEarly();
    }

    private Socket openRequest(String body) throws java.io.IOException {
        Socket socket = new Socket(server.getHost(), server.getPort());
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return socket;
    }

    private static void assertStoppedEarly() throws InterruptedException {
        GenerationResult abandoned = ScriptedModel.FINISHED.poll(10, TimeUnit.SECONDS);
        assertNotNull(abandoned, "the abandoned generation ended");
        assertEquals(FinishReason.STOPPED, abandoned.finish());
        assertTrue(abandoned.generatedTokens() < 2000, "it stopped long before its budget: "
                + abandoned.generatedTokens());
    }

    @Test
    void refusesWithRetryAfterWhenTheStreamAndTheQueueAreFull() throws Exception {
        ScriptedModel.hold = new CountDownLatch(1);
        try {
            CompletableFuture<Response> running = CompletableFuture.supplyAsync(
                    () -> post("/v1/completions", "{\"prompt\":\"hold:\",\"max_tokens\":2}"));
            awaitBusy(1, 0);
            CompletableFuture<Response> queued = CompletableFuture.supplyAsync(
                    () -> post("/v1/completions", "{\"prompt\":\"hold:\",\"max_tokens\":2}"));
            awaitBusy(1, 1);
            post("/v1/completions", "{\"prompt\":\"say:x\"}").then()
                    .statusCode(503)
                    .header("Retry-After", equalTo("1"))
                    .body("error.type", equalTo("overloaded_error"))
                    .body("error.code", equalTo("queue_full"));
            ScriptedModel.hold.countDown();
            running.get(10, TimeUnit.SECONDS).then().statusCode(200).body("choices[0].text", equalTo("hh"));
            queued.get(10, TimeUnit.SECONDS).then().statusCode(200).body("choices[0].text", equalTo("hh"));
        } finally {
            ScriptedModel.hold.countDown();
        }
    }

    /** Waits (boundedly) until the metrics show this many running and queued generations. */
    private static void awaitBusy(int running, int queued) throws InterruptedException {
        String expectRunning = "laneway_streams_busy " + running + ".0";
        String expectQueued = "laneway_queue_depth " + queued + ".0";
        for (int i = 0; i < 200; i++) {
            String metrics = given().get("/q/metrics").asString();
            if (metrics.contains(expectRunning) && metrics.contains(expectQueued)) {
                return;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("never saw " + expectRunning + " and " + expectQueued);
    }

    @Test
    void countsTokensInTheMetrics() {
        post("/v1/completions", "{\"prompt\":\"say:count\"}").then().statusCode(200);
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertTrue(metrics.contains("laneway_generated_tokens_total"), metrics);
        assertTrue(metrics.contains("laneway_prompt_tokens_total"));
        assertTrue(metrics.contains("laneway_generation_seconds_count{finish=\"end_of_text\"}"));
        assertTrue(metrics.contains("http_server_requests_seconds_count{method=\"POST\",outcome=\"SUCCESS\","
                + "status=\"200\",uri=\"/v1/completions\"}"), "requests by endpoint and status");
    }

    @Test
    void httpRefusalsCarryTheErrorBody() {
        given().get("/v1/no-such-thing").then().statusCode(404).contentType(startsWith("application/json"))
                .body("error.type", equalTo("invalid_request_error")).body("error.code", equalTo("not_found"));
        given().get("/v1/completions").then().statusCode(405).body("error.code", equalTo("method_not_allowed"));
        given().contentType("text/plain").body("{}").post("/v1/chat/completions").then().statusCode(415)
                .body("error.code", equalTo("unsupported_media_type"));
    }
}
