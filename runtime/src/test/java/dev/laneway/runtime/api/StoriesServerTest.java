package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.runtime.routes.BuiltRoutes;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acceptance tests: the real server on the real stories260K model, checked against llama.cpp's outputs.
 */
@QuarkusTest
@TestProfile(StoriesProfile.class)
class StoriesServerTest {

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }
    private static final List<Golden.Record> GOLDEN = Golden.stories260K();
    /** Kernels that sum in another order than llama.cpp's move small log-probabilities slightly. */
    private static final float LOGPROB_TOLERANCE = 0.02f;

    @TestHTTPResource("/")
    URL server;

    static Response post(String path, String json) {
        return given().contentType("application/json").body(json).post(path);
    }

    /**
     * Each request ({path, body, JSON path of its text}) sent alone, then {@code clients} of them at once, in turn:
     * each answer is the one its request got alone, and none is empty.
     */
    static void assertAnswersAtOnceAsAlone(List<String[]> requests, int clients) throws Exception {
        java.util.List<String> alone = new java.util.ArrayList<>();
        for (String[] r : requests) {
            alone.add(post(r[0], r[1]).then().statusCode(200).extract().jsonPath().getString(r[2]));
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(clients);
        try {
            java.util.List<java.util.concurrent.Future<String>> answers = new java.util.ArrayList<>();
            for (int i = 0; i < clients; i++) {
                String[] r = requests.get(i % requests.size());
                answers.add(pool.submit(() -> post(r[0], r[1]).then().statusCode(200).extract().jsonPath()
                        .getString(r[2])));
            }
            for (int i = 0; i < answers.size(); i++) {
                String[] r = requests.get(i % requests.size());
                assertEquals(alone.get(i % requests.size()), answers.get(i).get(), r[0]);
            }
        } finally {
            pool.shutdownNow();
        }
        assertFalse(alone.contains(null) || alone.contains(""), alone.toString());
    }

    static String quoted(String text) {
        return '"' + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + '"';
    }

    /** Greedy text equals llama.cpp's, token for token, for every public golden prompt. */
    @Test
    void greedyCompletionsEqualLlamaCpp() {
        for (Golden.Record golden : GOLDEN) {
            post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":" + quoted(golden.prompt())
                    + ",\"max_tokens\":64,\"temperature\":0}").then()
                    .statusCode(200)
                    .body("model", equalTo(StoriesProfile.ALIAS))
                    .body("choices[0].text", equalTo(golden.completionText()))
                    .body("choices[0].finish_reason", equalTo("length"))
                    .body("usage.prompt_tokens", equalTo(golden.promptIds().length))
                    .body("usage.completion_tokens", equalTo(64))
                    .body("usage.total_tokens", equalTo(golden.promptIds().length + 64))
                    .body("timings.predicted_n", equalTo(64));
        }
    }

    /**
     * Without --embeddings and --slot-save-path, their endpoints answer 501 naming the flag; /infill answers 501 for
     * a model without fill-in-the-middle tokens.
     */
    @Test
    void embeddingsSlotActionsAndInfillAreOffUnlessTheServerAndModelCan() {
        post("/infill", "{\"input_prefix\":\"def f(\",\"input_suffix\":\")\"}").then().statusCode(501)
                .body("error.message", org.hamcrest.Matchers.containsString("fill-in-the-middle"));
        post("/v1/embeddings", "{\"input\":\"Hello\"}").then().statusCode(501)
                .body("error.message", org.hamcrest.Matchers.containsString("--embeddings"));
        post("/slots/0?action=erase", "").then().statusCode(501)
                .body("error.message", org.hamcrest.Matchers.containsString("--slot-save-path"));
    }

    /**
     * A request that begins with what a stream's KV cache holds (here: a prompt and its first 20 generated tokens)
     * computes only the rest, says how much it reused, and still gives llama.cpp's text.
     */
    @Test
    void aPromptSharingAPrefixWithTheLastRequestReusesItsCache() {
        Golden.Record golden = GOLDEN.get(1);
        post("/v1/completions", "{\"prompt\":" + Arrays.toString(golden.promptIds())
                + ",\"max_tokens\":64,\"temperature\":0}").then().statusCode(200)
                .body("choices[0].text", equalTo(golden.completionText()));
        int[] longer = Arrays.copyOf(golden.promptIds(), golden.promptIds().length + 20);
        System.arraycopy(golden.completionIds(), 0, longer, golden.promptIds().length, 20);
        JsonPath again = post("/v1/completions", "{\"prompt\":" + Arrays.toString(longer)
                + ",\"max_tokens\":44,\"temperature\":0}").then().statusCode(200)
                .body("usage.prompt_tokens", equalTo(longer.length))
                .body("usage.prompt_tokens_details.cached_tokens", equalTo(longer.length - 1))
                .body("timings.cache_n", equalTo(longer.length - 1))
                .body("timings.prompt_n", equalTo(1))
                .extract().jsonPath();
        int[] rest = Arrays.copyOfRange(golden.completionIds(), 20, 64);
        String expected = post("/detokenize", "{\"tokens\":" + Arrays.toString(rest) + "}").then().statusCode(200)
                .extract().path("content");
        assertEquals(expected, again.getString("choices[0].text"));
        assertTrue(metric("laneway_prompt_cached_tokens_total") >= longer.length - 1, "cache hits are counted");
        assertTrue(metric("laneway_time_to_first_token_seconds_count") >= 2, "first tokens are timed");
        assertTrue(metric("laneway_inter_token_latency_seconds_count") >= 2, "token gaps are timed");
    }

    /**
     * A client's cache salt keeps its prompts to itself: the same chat under another salt (or none) reuses nothing
     * and is told nothing of the other's cache, and under its own salt it reuses what it left. One stream here, so
     * each request overwrites the last one's cache, which the host-memory cache keeps under its salt. A chat no other
     * test sends: without a salt, it may reuse only what other unsalted chats share with it (the template's start).
     */
    @Test
    void aCacheSaltKeepsPromptCachesApart() {
        String chat = "\"messages\":[{\"role\":\"user\",\"content\":\"" + GOLDEN.get(0).prompt()
                + " Salted.\"}],\"max_tokens\":4,\"temperature\":0";
        int first = post("/v1/chat/completions", "{" + chat + ",\"cache_salt\":\"alice\"}").then().statusCode(200)
                .extract().path("usage.prompt_tokens");
        post("/v1/chat/completions", "{" + chat + ",\"cache_salt\":\"bob\"}").then().statusCode(200)
                .body("usage.prompt_tokens_details.cached_tokens", equalTo(0));
        post("/v1/chat/completions", "{" + chat + ",\"cache_salt\":\"bob\"}").then().statusCode(200)
                .body("usage.prompt_tokens_details.cached_tokens", equalTo(first - 1));
        post("/v1/chat/completions", "{" + chat + "}").then().statusCode(200)
                .body("usage.prompt_tokens_details.cached_tokens", org.hamcrest.Matchers.lessThan(first / 2));
        post("/completion", "{\"prompt\":\"" + GOLDEN.get(0).prompt() + "\",\"n_predict\":2,"
                + "\"cache_salt\":\"carol\"}").then().statusCode(200).body("timings.cache_n", equalTo(0));
        post("/v1/chat/completions", "{" + chat + ",\"cache_salt\":\"\"}").then().statusCode(400)
                .body("error.param", equalTo("cache_salt"));
        post("/v1/chat/completions", "{" + chat + ",\"cache_salt\":7}").then().statusCode(400)
                .body("error.param", equalTo("cache_salt"));
    }

    @Test
    void aPromptOfTokenIdsGivesTheSameText() {
        Golden.Record golden = GOLDEN.get(2);
        post("/v1/completions", "{\"prompt\":" + Arrays.toString(golden.promptIds())
                + ",\"max_tokens\":64,\"temperature\":0}").then()
                .statusCode(200)
                .body("choices[0].text", equalTo(golden.completionText()));
    }

    @Test
    void streamedChunksConcatenateToTheSameText() {
        Golden.Record golden = GOLDEN.get(0);
        Response response = post("/v1/completions", "{\"prompt\":" + quoted(golden.prompt())
                + ",\"max_tokens\":64,\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        response.then().statusCode(200).contentType(startsWith("text/event-stream"));
        List<JsonPath> chunks = ServerSentEvents.chunks(response.asString());
        assertEquals(golden.completionText(), ServerSentEvents.text(chunks));
        assertTrue(chunks.size() > 10, "the text came in many chunks");
        JsonPath closing = chunks.get(chunks.size() - 2);
        assertEquals("length", closing.getString("choices[0].finish_reason"));
        JsonPath usage = chunks.get(chunks.size() - 1);
        assertEquals(List.of(), usage.getList("choices"));
        assertEquals(64, usage.getInt("usage.completion_tokens"));
        assertEquals(golden.promptIds().length, usage.getInt("usage.prompt_tokens"));
    }

    @Test
    void chatCompletionsUseTheChatTemplate() {
        String messages = "[{\"role\":\"user\",\"content\":\"Hello\"}]";
        String prompt = post("/apply-template", "{\"messages\":" + messages + "}").then().statusCode(200)
                .extract().path("prompt");
        List<Integer> promptIds = post("/tokenize", "{\"content\":" + quoted(prompt) + ",\"add_special\":true}")
                .then().statusCode(200).extract().path("tokens");
        JsonPath whole = post("/v1/chat/completions", "{\"messages\":" + messages
                + ",\"max_tokens\":8,\"temperature\":0}").then()
                .statusCode(200)
                .body("object", equalTo("chat.completion"))
                .body("id", startsWith("chatcmpl-"))
                .body("choices[0].message.role", equalTo("assistant"))
                .body("usage.prompt_tokens", equalTo(promptIds.size()))
                .extract().jsonPath();
        assertEquals(promptIds.size(), whole.getInt("timings.prompt_n") + whole.getInt("timings.cache_n"));
        assertEquals(whole.getInt("timings.cache_n"), whole.getInt("usage.prompt_tokens_details.cached_tokens"));
        String content = whole.getString("choices[0].message.content");
        assertFalse(content.isEmpty());
        assertFalse(whole.getMap("").containsKey("__verbose"), "only serve --verbose adds __verbose");
        // The same conversation, as a completion of the rendered prompt, gives the same text.
        post("/v1/completions", "{\"prompt\":" + quoted(prompt) + ",\"max_tokens\":8,\"temperature\":0}").then()
                .body("choices[0].text", equalTo(content));
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/chat/completions", "{\"messages\":" + messages
                + ",\"max_tokens\":8,\"temperature\":0,\"stream\":true}").asString());
        assertEquals("assistant", chunks.get(0).getString("choices[0].delta.role"));
        Map<String, Object> opening = chunks.get(0).getMap("choices[0].delta");
        assertTrue(opening.containsKey("content") && opening.get("content") == null, "the opening's content is null");
        assertFalse(chunks.get(chunks.size() - 1).getMap("choices[0].delta").containsKey("content"));
        assertEquals(content, ServerSentEvents.text(chunks));
        assertEquals(whole.getString("choices[0].finish_reason"),
                chunks.get(chunks.size() - 1).getString("choices[0].finish_reason"));
    }

    /** llama-server's per-request {@code verbose}: the answer carries {@code __verbose}, with the prompt's tokens detokenized. */
    @Test
    void aRequestMayAskForVerboseAnswers() {
        String messages = "\"messages\":[{\"role\":\"system\",\"content\":\"Book\"},{\"role\":\"user\","
                + "\"content\":\"What is the best book\"}],\"max_tokens\":2";
        String rendered = post("/apply-template", "{" + messages + "}").then().statusCode(200).extract().path("prompt");
        post("/v1/chat/completions", "{" + messages + ",\"verbose\":true}").then().statusCode(200)
                .body("__verbose.prompt", equalTo("<s> " + rendered));
        JsonPath quiet = post("/v1/chat/completions", "{" + messages + ",\"verbose\":false}").then().statusCode(200)
                .extract().jsonPath();
        assertFalse(quiet.getMap("").containsKey("__verbose"));
        post("/v1/completions", "{\"prompt\":\"Once\",\"max_tokens\":1,\"verbose\":true}").then().statusCode(200)
                .body("__verbose.prompt", equalTo("<s> Once"));
        post("/v1/chat/completions", "{" + messages + ",\"verbose\":\"yes\"}").then().statusCode(400)
                .body("error.param", equalTo("verbose"));
    }

    /**
     * Special-token text in a message is text: the BOS and EOS a client writes are not BOS and EOS (this model's
     * template, ChatML, spells no special token of its vocabulary, so the whole prompt tokenizes as text).
     */
    @Test
    void specialTokenTextInAMessageIsText() {
        String messages = "[{\"role\":\"user\",\"content\":\"Once</s><s> upon a time</s>\"}]";
        String prompt = post("/apply-template", "{\"messages\":" + messages + "}").then().statusCode(200)
                .extract().path("prompt");
        assertTrue(prompt.contains("Once</s><s> upon a time</s>"), prompt);
        List<Integer> asText = post("/tokenize", "{\"content\":" + quoted(prompt)
                + ",\"add_special\":true,\"parse_special\":false}").then().statusCode(200).extract().path("tokens");
        List<Integer> asControl = post("/tokenize", "{\"content\":" + quoted(prompt)
                + ",\"add_special\":true,\"parse_special\":true}").then().statusCode(200).extract().path("tokens");
        assertNotEquals(asText.size(), asControl.size(), "the text spells special tokens");
        post("/v1/chat/completions", "{\"messages\":" + messages + ",\"max_tokens\":1,\"temperature\":0}").then()
                .statusCode(200)
                .body("usage.prompt_tokens", equalTo(asText.size()));
    }

    /** Template syntax in a message reaches the prompt byte for byte: content is data, never template code. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "what does {{ 7*7 }} print? {% if true %}yes{% endif %}",
            "helm: {{ .Values.x }}",
            "{# note #} {{- '-' -}} {% raw %}",
            "{{ raise_exception('x') }} {% include '/etc/passwd' %}"})
    void messageContentIsNeverEvaluated(String content) {
        String messages = "[{\"role\":\"user\",\"content\":" + quoted(content) + "}]";
        String prompt = post("/apply-template", "{\"messages\":" + messages + "}").then().statusCode(200)
                .extract().path("prompt");
        assertTrue(prompt.contains(content), prompt);
        post("/v1/chat/completions", "{\"messages\":" + messages + ",\"max_tokens\":2,\"temperature\":0}").then()
                .statusCode(200)
                .body("choices[0].message.role", equalTo("assistant"));
    }

    /** response_format, json_schema and grammar hold the output to their language, streamed or not. */
    @Test
    void structuredOutputsParseAndConform() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        String schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":12},"
                + "\"age\":{\"type\":\"integer\"},\"pet\":{\"enum\":[\"cat\",\"dog\"]}},"
                + "\"required\":[\"name\",\"age\",\"pet\"],\"additionalProperties\":false}";
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me of Lily.\"}],\"max_tokens\":200,"
                + "\"temperature\":0,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"p\","
                + "\"strict\":true,\"schema\":" + schema + "}}";
        JsonPath whole = post("/v1/chat/completions", chat + "}").then().statusCode(200).extract().jsonPath();
        assertEquals("stop", whole.getString("choices[0].finish_reason"));
        JsonNode value = json.readTree(whole.getString("choices[0].message.content"));
        assertEquals(Set.of("name", "age", "pet"), fieldNames(value));
        assertTrue(value.get("age").isIntegralNumber() && value.get("name").textValue().length() <= 12, value.toString());
        assertTrue(Set.of("cat", "dog").contains(value.get("pet").textValue()), value.toString());
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/chat/completions", chat + ",\"stream\":true}")
                .asString());
        assertEquals(whole.getString("choices[0].message.content"), ServerSentEvents.text(chunks));

        String story = "{\"prompt\":\"Once upon a time\",\"max_tokens\":120,\"temperature\":1,\"seed\":5";
        String object = post("/v1/completions", story + ",\"response_format\":{\"type\":\"json_object\"}}").then()
                .statusCode(200).extract().path("choices[0].text");
        assertTrue(object.startsWith("{"), object);
        String answer = post("/v1/completions", story + ",\"grammar\":\"root ::= (\\\"yes\\\" | \\\"no\\\") \\\".\\\"\"}")
                .then().statusCode(200).body("choices[0].finish_reason", equalTo("stop")).extract()
                .path("choices[0].text");
        assertTrue(answer.equals("yes.") || answer.equals("no."), answer);
        JsonNode list = json.readTree(post("/v1/completions", story + ",\"json_schema\":{\"type\":\"array\","
                + "\"items\":{\"type\":\"boolean\"},\"minItems\":2,\"maxItems\":3}}").then().statusCode(200)
                .extract().<String>path("choices[0].text"));
        assertTrue(list.isArray() && list.size() >= 2 && list.size() <= 3 && list.get(0).isBoolean(), list.toString());
    }

    /**
     * stories260K's template (ChatML, the default) writes no tool calls of its own, so a chat with tools is answered
     * in the generic JSON, held to it by a grammar: a named or required tool choice always gets its call.
     */
    @Test
    void toolChoicesAreEnforcedAndTheOpenAiNodeSdkReadsTheCalls() throws Exception {
        NodeSdk.Run run = NodeSdk.tools(server.toString() + "v1", "What is the weather in Paris?", "It is 18 degrees.",
                "{\"toolChoice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},"
                        + "\"answerToolChoice\":\"none\",\"cities\":[\"Paris\"],\"maxTokens\":150}");
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        for (String way : List.of("whole", "streamed")) {
            assertEquals("get_weather", seen.getString(way + ".call.name"));
        }

        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"add\",\"parameters\":{\"type\":"
                + "\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
                + "\"required\":[\"a\",\"b\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"shout\","
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"word\":{\"enum\":[\"hi\",\"yo\"]}},"
                + "\"required\":[\"word\"]}}}]";
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"Lily had two apples.\"}],\"max_tokens\":120,"
                + "\"temperature\":1,\"seed\":3," + tools;
        // One call a turn: with parallel calls this little model goes on calling until max_tokens.
        String single = ",\"parallel_tool_calls\":false";
        for (String more : List.of(single, single + ",\"stream\":true")) {
            String body = post("/v1/chat/completions", chat + ",\"tool_choice\":\"required\"" + more + "}").then()
                    .statusCode(200).extract().asString();
            List<Map<String, Object>> calls;
            if (more.contains("stream")) {
                List<JsonPath> chunks = ServerSentEvents.chunks(body);
                JsonPath last = chunks.get(chunks.size() - 1);
                assertEquals("tool_calls", last.getString("choices[0].finish_reason"), body);
                calls = last.getList("choices[0].delta.tool_calls.function");
            } else {
                JsonPath whole = new JsonPath(body);
                assertEquals("tool_calls", whole.getString("choices[0].finish_reason"), body);
                calls = whole.getList("choices[0].message.tool_calls.function");
            }
            assertFalse(calls.isEmpty(), body);
            assertEquals(1, calls.size(), body);
            for (Map<String, Object> call : calls) {
                JsonNode arguments = json.readTree((String) call.get("arguments"));
                if (call.get("name").equals("add")) {
                    assertTrue(arguments.get("a").isIntegralNumber() && arguments.get("b").isIntegralNumber(), body);
                } else {
                    assertEquals("shout", call.get("name"));
                    assertTrue(Set.of("hi", "yo").contains(arguments.get("word").textValue()), body);
                }
            }
        }
        // Calls cut short by max_tokens are no calls: the text comes back as it is.
        post("/v1/chat/completions", chat + ",\"tool_choice\":\"required\",\"max_tokens\":30}").then()
                .statusCode(200).body("choices[0].finish_reason", equalTo("length"))
                .body("choices[0].message.content", startsWith("{\"tool_call"));
        // Offered tools but free to answer: a reply is content, read out of its JSON, or else a call.
        JsonPath auto = post("/v1/chat/completions", chat + ",\"max_tokens\":400,\"parallel_tool_calls\":false}")
                .then().statusCode(200).extract().jsonPath();
        String finish = auto.getString("choices[0].finish_reason");
        String content = auto.getString("choices[0].message.content");
        switch (finish) {
            case "tool_calls" -> assertEquals(1, auto.getList("choices[0].message.tool_calls").size());
            case "stop" -> assertFalse(content.startsWith("{"), auto.prettify());
            default -> assertTrue(finish.equals("length") && content.startsWith("{\""), auto.prettify());
        }
        post("/v1/chat/completions", chat + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":"
                + "\"jump\"}}}").then().statusCode(400).body("error.param", equalTo("tool_choice"));
        post("/v1/chat/completions", chat + ",\"tool_choice\":\"required\",\"response_format\":{\"type\":"
                + "\"json_object\"}}").then().statusCode(400).body("error.param", equalTo("response_format"));
    }

    /** What constrained decoding cannot honour is refused by name, before anything is generated. */
    @Test
    void refusesSchemasAndGrammarsItCannotHonour() {
        String base = "{\"prompt\":\"Once\",\"max_tokens\":4";
        post("/v1/completions", base + ",\"grammar\":\"root ::= missing\"}").then().statusCode(400)
                .body("error.param", equalTo("grammar"))
                .body("error.message", equalTo("rule missing is used but not defined"));
        post("/v1/completions", base + ",\"stream\":true,\"response_format\":{\"type\":\"json_schema\","
                + "\"json_schema\":{\"schema\":{\"type\":\"string\",\"pattern\":\"^a+$\"}}}}").then().statusCode(400)
                .body("error.param", equalTo("response_format.json_schema.schema"))
                .body("error.message", equalTo("response_format.json_schema.schema: the JSON Schema keyword pattern"
                        + " is not supported"));
        post("/v1/completions", base + ",\"json_schema\":{\"type\":\"object\"},\"grammar\":\"root ::= \\\"a\\\"\"}")
                .then().statusCode(400).body("error.param", equalTo("grammar"));
        post("/v1/completions", base + ",\"response_format\":{\"type\":\"xml\"}}").then().statusCode(400)
                .body("error.param", equalTo("response_format.type"));
        post("/v1/completions", base + "}").then().statusCode(200);
    }

    private static Set<String> fieldNames(JsonNode object) {
        Set<String> names = new HashSet<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void stopsAtStopStringsIncludingOneSplitAcrossTokens() {
        String prompt = quoted(GOLDEN.get(0).prompt());
        post("/v1/completions", "{\"prompt\":" + prompt + ",\"max_tokens\":64,\"temperature\":0,\"stop\":\"Lily\"}")
                .then().statusCode(200)
                .body("choices[0].text", equalTo(", there was a little girl named "))
                .body("choices[0].finish_reason", equalTo("stop"));
        // " girl" is three tokens: " g", "ir", "l"; the stop string starts inside the second.
        String split = "{\"prompt\":" + prompt + ",\"max_tokens\":64,\"temperature\":0,\"stop\":[\"zzz\",\"rl na\"]";
        post("/v1/completions", split + "}").then().statusCode(200)
                .body("choices[0].text", equalTo(", there was a little gi"))
                .body("choices[0].finish_reason", equalTo("stop"))
                .body("usage.completion_tokens", equalTo(9));
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/completions", split + ",\"stream\":true}")
                .asString());
        assertEquals(", there was a little gi", ServerSentEvents.text(chunks));
        assertEquals("stop", chunks.get(chunks.size() - 1).getString("choices[0].finish_reason"));
    }

    @Test
    void logitBiasesBanAndForceTokens() {
        // The comma as it follows "time": the token the greedy continuation starts with.
        List<Integer> prompt = post("/tokenize", "{\"content\":\"Once upon a time\"}").then().extract().path("tokens");
        List<Integer> withComma = post("/tokenize", "{\"content\":\"Once upon a time,\"}").then().extract()
                .path("tokens");
        assertEquals(prompt, withComma.subList(0, withComma.size() - 1));
        int comma = withComma.get(withComma.size() - 1);
        String base = "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0";
        post("/v1/completions", base + "}").then().statusCode(200).body("choices[0].text", equalTo(", there was a"));
        String banned = post("/v1/completions", base + ",\"logit_bias\":{\"" + comma + "\":-100}}").then()
                .statusCode(200).extract().path("choices[0].text");
        assertFalse(banned.contains(","), banned);
        post("/v1/completions", base + ",\"logit_bias\":{\"" + comma + "\":100}}").then().statusCode(200)
                .body("choices[0].text", equalTo(",,,,"));
        post("/v1/completions", base + ",\"logit_bias\":{\"99999\":1}}").then().statusCode(400)
                .body("error.param", equalTo("logit_bias"));
        post("/v1/completions", base + ",\"presence_penalty\":1.5,\"frequency_penalty\":0.5}").then()
                .statusCode(200);
    }

    @Test
    void theSameSeedGivesTheSameText() {
        String base = "{\"prompt\":\"Once upon a time\",\"max_tokens\":32,\"temperature\":1.0,\"top_k\":0,"
                + "\"top_p\":1,\"min_p\":0,\"seed\":";
        String first = post("/v1/completions", base + "42}").then().statusCode(200).extract().path("choices[0].text");
        String again = post("/v1/completions", base + "42}").then().statusCode(200).extract().path("choices[0].text");
        assertEquals(first, again);
        Set<String> others = new HashSet<>();
        for (int seed = 1; seed <= 3; seed++) {
            others.add(post("/v1/completions", base + seed + "}").then().statusCode(200)
                    .extract().path("choices[0].text"));
        }
        others.add(first);
        assertTrue(others.size() > 1, "different seeds draw different texts: " + others);
        // n choices with a seed: choice j draws from seed + j, so choice 1 of seed 41 is choice 0 of seed 42.
        post("/v1/completions", base + "41,\"n\":2}").then().statusCode(200)
                .body("choices[1].text", equalTo(first));
    }

    @Test
    void reportsLogprobsAsLlamaCppComputesThem() {
        Golden.Record golden = GOLDEN.get(0);
        JsonPath json = post("/v1/completions", "{\"prompt\":" + quoted(golden.prompt())
                + ",\"max_tokens\":16,\"temperature\":0,\"logprobs\":5}").then().statusCode(200)
                .extract().jsonPath();
        List<String> tokens = json.getList("choices[0].logprobs.tokens");
        List<Float> logprobs = json.getList("choices[0].logprobs.token_logprobs", Float.class);
        List<Integer> offsets = json.getList("choices[0].logprobs.text_offset");
        assertEquals(16, tokens.size());
        int offset = 0;
        for (int i = 0; i < 16; i++) {
            JsonNode position = golden.top5().get(i);
            assertEquals(position.get("chosen").get("text").asText(), tokens.get(i), "token " + i);
            assertEquals((float) position.get("chosen").get("logprob").asDouble(), logprobs.get(i), LOGPROB_TOLERANCE,
                    "logprob " + i);
            assertEquals(offset, offsets.get(i), "text offset " + i);
            offset += tokens.get(i).length();
            Map<String, Float> top = json.getMap("choices[0].logprobs.top_logprobs[" + i + "]", String.class,
                    Float.class);
            for (JsonNode candidate : position.get("top5")) {
                Float logprob = top.get(candidate.get("text").asText());
                assertTrue(logprob != null, "position " + i + " lists " + candidate.get("text"));
                assertEquals((float) candidate.get("logprob").asDouble(), logprob, LOGPROB_TOLERANCE);
            }
        }
        JsonPath chat = post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                + "\"max_tokens\":4,\"temperature\":0,\"logprobs\":true,\"top_logprobs\":3}").then().statusCode(200)
                .extract().jsonPath();
        List<Map<String, Object>> content = chat.getList("choices[0].logprobs.content");
        assertEquals(chat.getInt("usage.completion_tokens"), content.size());
        assertEquals(3, chat.getList("choices[0].logprobs.content[0].top_logprobs").size());
        assertTrue(chat.getFloat("choices[0].logprobs.content[0].logprob") <= 0);
    }

    @Test
    void tokenizesAndDetokenizesLikeLlamaCpp() {
        Golden.Record golden = GOLDEN.get(1);
        post("/tokenize", "{\"content\":" + quoted(golden.prompt()) + ",\"add_special\":true}").then()
                .statusCode(200)
                .body("tokens", equalTo(Arrays.stream(golden.promptIds()).boxed().toList()));
        post("/tokenize", "{\"content\":\"Once\",\"with_pieces\":true}").then().statusCode(200)
                .body("tokens[0].id", equalTo(403));
        post("/detokenize", "{\"tokens\":" + Arrays.toString(golden.completionIds()) + "}").then().statusCode(200)
                .body("content", equalTo(golden.completionText()));
    }

    @Test
    void listsTheModelUnderItsAliasWithRouteAndDevice() {
        given().get("/v1/models").then().statusCode(200)
                .body("object", equalTo("list"))
                .body("data[0].id", equalTo(StoriesProfile.ALIAS))
                .body("data[0].object", equalTo("model"))
                .body("data[0].route", equalTo(BuiltRoutes.denseModelRoute()))
                .body("data[0].device", equalTo("cpu"));
        given().get("/v1/models/" + StoriesProfile.ALIAS).then().statusCode(200);
        given().get("/v1/models/gpt-4").then().statusCode(404).body("error.code", equalTo("model_not_found"));
    }

    @Test
    void healthSaysOkWithTheModelRouteAndDevice() {
        given().get("/health").then().statusCode(200).body("status", equalTo("ok"));
        given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().get("/q/health/ready").then().statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.data.model", hasItem(StoriesProfile.ALIAS))
                .body("checks.data.route", hasItem(BuiltRoutes.denseModelRoute()))
                .body("checks.data.device", hasItem("cpu"));
    }

    @ParameterizedTest(name = "{0} {1} -> {2} {3}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "/v1/completions      | not json                                                  | 400 | -",
            "/v1/completions      | [1,2]                                                     | 400 | -",
            "/v1/completions      | {\"prompt\":{\"a\":1}}                                    | 400 | prompt",
            "/v1/completions      | {\"prompt\":[1,99999]}                                    | 400 | prompt",
            "/v1/completions      | {\"prompt\":\"x\",\"max_tokens\":\"many\"}                | 400 | max_tokens",
            "/v1/completions      | {\"prompt\":\"x\",\"max_tokens\":0}                       | 400 | max_tokens",
            "/v1/completions      | {\"prompt\":\"x\",\"temperature\":-0.5}                   | 400 | temperature",
            "/v1/completions      | {\"prompt\":\"x\",\"temperature\":\"hot\"}                | 400 | temperature",
            "/v1/completions      | {\"prompt\":\"x\",\"top_p\":0}                            | 400 | top_p",
            "/v1/completions      | {\"prompt\":\"x\",\"top_p\":1.01}                         | 400 | top_p",
            "/v1/completions      | {\"prompt\":\"x\",\"n\":0}                                | 400 | n",
            "/v1/completions      | {\"prompt\":\"x\",\"stop\":{\"s\":1}}                     | 400 | stop",
            "/v1/completions      | {\"prompt\":\"x\",\"seed\":\"abc\"}                       | 400 | seed",
            "/v1/completions      | {\"prompt\":\"x\",\"logprobs\":50}                        | 400 | logprobs",
            "/v1/completions      | {\"prompt\":\"x\",\"stream\":1}                           | 400 | stream",
            "/v1/completions      | {\"prompt\":\"x\",\"model\":\"gpt-4\"}                    | 404 | model",
            "/v1/chat/completions | {\"messages\":[]}                                         | 400 | messages",
            "/v1/chat/completions | {\"messages\":[{\"role\":\"bard\",\"content\":\"x\"}]}    | 400 | messages[0].role",
            "/v1/chat/completions | {\"messages\":[{\"role\":\"user\",\"content\":1}]}        | 400 | messages[0].content",
            "/v1/chat/completions | {\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_completion_tokens\":0} | 400 | max_completion_tokens",
            "/v1/chat/completions | {\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_p\":2} | 400 | top_p",
            "/v1/chat/completions | {\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"model\":\"x\"} | 404 | model",
            "/tokenize            | {\"content\":5}                                           | 400 | content",
            "/detokenize          | {\"tokens\":[-1]}                                         | 400 | tokens",
    })
    void refusesBadInputByNameWithoutServerDetails(String path, String body, int status, String param) {
        Response response = post(path, body);
        response.then().statusCode(status).contentType(startsWith("application/json"))
                .body("error.param", equalTo(param))
                .body("error.type", equalTo("invalid_request_error"));
        assertNoServerDetails(response.asString());
    }

    @Test
    void refusesAPromptThatDoesNotFitTheContextWithBothCounts() {
        int context = given().get("/v1/models").then().extract().path("data[0].context_length");
        String prompt = "Once" + " upon".repeat(context);
        int tokens = post("/tokenize", "{\"content\":\"" + prompt + "\",\"add_special\":true}").then()
                .extract().path("tokens.size()");
        Response response = post("/v1/completions", "{\"prompt\":\"" + prompt + "\"}");
        response.then().statusCode(400).body("error.param", equalTo("prompt"))
                .body("error.code", equalTo("context_length_exceeded"));
        Matcher counts = Pattern.compile("the prompt \\((\\d+) tokens\\) exceeds the available context size \\((\\d+)"
                + " tokens\\)")
                .matcher(response.path("error.message"));
        assertTrue(counts.find(), (String) response.path("error.message"));
        assertEquals(tokens, Integer.parseInt(counts.group(1)));
        assertEquals(context, Integer.parseInt(counts.group(2)));
    }

    @Test
    void httpRefusalsCarryTheErrorBody() {
        given().get("/v1/chat/completions").then().statusCode(405).body("error.code", equalTo("method_not_allowed"));
        given().contentType("text/plain").body("{\"prompt\":\"x\"}").post("/v1/completions").then().statusCode(415)
                .body("error.type", equalTo("invalid_request_error"));
        given().get("/nowhere").then().statusCode(404).body("error.code", equalTo("not_found"));
        for (String path : List.of("/rerank", "/v1/rerank", "/reranking", "/v1/reranking")) {
            post(path, "{\"query\":\"q\",\"documents\":[\"a\"]}").then().statusCode(501)
                    .body("error.code", equalTo("not_supported"))
                    .body("error.message", org.hamcrest.Matchers.containsString("ranking head"));
        }
    }

    @Test
    void aDisconnectedStreamStopsAndFreesTheOnlyStream() throws Exception {
        double before = metric("laneway_generated_tokens_total");
        int context = given().get("/v1/models").then().extract().path("data[0].context_length");
        // Four choices that ignore the end of text: far more work than the test waits for, if it were not stopped.
        int budget = 4 * (context - 5);
        String body = "{\"prompt\":\"Once upon a time\",\"n\":4,\"ignore_eos\":true,\"stream\":true}";
        try (Socket socket = new Socket(server.getHost(), server.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String seen = "";
            byte[] buffer = new byte[256];
            while (!seen.contains("data: ")) {
                int n = in.read(buffer);
                assertTrue(n > 0, "the stream started");
                seen += new String(buffer, 0, n, StandardCharsets.UTF_8);
            }
        }
        for (int i = 0; i < 400 && metric("laneway_streams_busy") > 0; i++) {
            Thread.sleep(25);
        }
        assertEquals(0.0, metric("laneway_streams_busy"), "the stream is free");
        double generated = metric("laneway_generated_tokens_total") - before;
        assertTrue(generated < budget, "the generation stopped early: " + generated + " of " + budget);
        // With the only stream free and nothing queued, the next request starts at once.
        assertEquals(0.0, metric("laneway_queue_depth"));
        post("/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0}").then()
                .statusCode(200).body("choices[0].text", equalTo(", there was a"));
    }

    /**
     * A client that stays connected but stops reading its stream: once the frames waiting for it pass the profile's
     * bound (1 MiB, or 2 s with nothing taken), it is given up: its generation stops, freeing the only stream, its
     * connection is closed before the stream's end, and the next request is served at once.
     */
    @Test
    void aClientThatStopsReadingIsGivenUp() throws Exception {
        double givenUp = metric("laneway_stream_clients_given_up_total");
        int context = given().get("/v1/models").then().extract().path("data[0].context_length");
        // Four choices of the whole context with 20 alternatives per token: about 20 MB of frames, if never stopped.
        String body = "{\"prompt\":\"Once upon a time\",\"n\":4,\"max_tokens\":" + (context - 8)
                + ",\"logprobs\":20,\"ignore_eos\":true,\"stream\":true}";
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(4096);
            socket.connect(new java.net.InetSocketAddress(server.getHost(), server.getPort()));
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (int i = 0; i < 1200 && metric("laneway_stream_clients_given_up_total") == givenUp; i++) {
                Thread.sleep(25);
            }
            assertEquals(givenUp + 1, metric("laneway_stream_clients_given_up_total"), "the client was given up");
            for (int i = 0; i < 400 && metric("laneway_streams_busy") > 0; i++) {
                Thread.sleep(25);
            }
            assertEquals(0.0, metric("laneway_streams_busy"), "the stream is free");
            // What was already on its way can still be read; then the connection ends, without the stream's end.
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[65536];
            long read = 0;
            boolean ended = false;
            byte[] tail = new byte[0];
            try {
                for (int n; (n = in.read(buffer)) > 0; ) {
                    read += n;
                    tail = Arrays.copyOfRange(buffer, Math.max(0, n - 32), n);
                }
                ended = true;
            } catch (java.net.SocketException reset) {
                ended = true;
            }
            assertTrue(ended, "the connection was closed");
            assertFalse(new String(tail, StandardCharsets.UTF_8).contains("[DONE]"), "the stream did not end");
            assertTrue(read < 20_000_000, "read " + read + " bytes");
        }
        post("/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0}").then()
                .statusCode(200).body("choices[0].text", equalTo(", there was a"));
    }

    @Test
    void theOpenAiNodeSdkWorksAgainstTheServer() throws Exception {
        NodeSdk.Run run = NodeSdk.run(server.toString() + "v1", "Once upon a time", Map.of());
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        assertEquals(StoriesProfile.ALIAS, seen.getString("model"));
        assertEquals(seen.getString("content"), seen.getString("streamed"));
        assertTrue(seen.getInt("usage.completion_tokens") >= 1);
    }

    static double metric(String name) {
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$").matcher(metrics);
        assertTrue(m.find(), "the metrics hold " + name);
        return Double.parseDouble(m.group(2));
    }

    static void assertNoServerDetails(String body) {
        String checkout = Path.of("").toAbsolutePath().getParent().toString();
        for (String leak : List.of("Exception", "\tat ", "at dev.laneway", "at java.", ".java:", checkout,
                StoriesProfile.shared().toAbsolutePath().normalize().toString())) {
            assertFalse(body.contains(leak), "the body holds server details (" + leak + "): " + body);
        }
        assertNotEquals("", body);
    }
}
