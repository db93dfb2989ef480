package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

import static dev.laneway.runtime.api.StoriesServerTest.post;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ollama's API on the real stories260K model: {@code /api/chat} and {@code /api/generate} give the text the OpenAI
 * and llama-server paths give, whole and as newline-delimited JSON, with Ollama's counts; {@code format} constrains
 * the answer; the lists describe the served file; embeddings equal OpenAI's; what cannot be honoured is refused by
 * name in Ollama's error shape; and clients of both APIs at once each get their answer alone.
 */
@QuarkusTest
@TestProfile(StoriesProfile.LlamaServer.class)
class StoriesOllamaApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MESSAGES = "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}]";
    private static final String GREEDY = "\"options\":{\"temperature\":0,\"num_predict\":16}";

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    @Test
    void chatAndGenerateAnswerAsTheOpenAiAndLlamaServerPathsDo() throws Exception {
        JsonPath openAi = post("/v1/chat/completions", "{" + MESSAGES + ",\"max_tokens\":16,\"temperature\":0}")
                .then().statusCode(200).extract().jsonPath();
        String text = openAi.getString("choices[0].message.content");
        assertFalse(text.isEmpty());

        JsonPath chat = post("/api/chat", "{\"model\":\"stories:latest\"," + MESSAGES + ",\"stream\":false,"
                + GREEDY + "}").then().statusCode(200).contentType(containsString("application/json")).extract()
                .jsonPath();
        assertEquals(text, chat.getString("message.content"));
        assertEquals("assistant", chat.getString("message.role"));
        assertTrue(chat.getBoolean("done"));
        assertEquals(openAi.getString("choices[0].finish_reason"), chat.getString("done_reason"));
        assertEquals(openAi.getInt("usage.completion_tokens"), chat.getInt("eval_count"));
        assertEquals(openAi.getInt("usage.prompt_tokens"), chat.getInt("prompt_eval_count"));
        assertTrue(chat.getLong("total_duration") >= chat.getLong("eval_duration"));

        // Ollama streams unless told not to: a JSON object per line, the last one done with the counts
        Response streamed = post("/api/chat", "{\"model\":\"stories\"," + MESSAGES + "," + GREEDY + "}");
        streamed.then().statusCode(200).contentType(containsString("application/x-ndjson"));
        List<JsonNode> lines = lines(streamed.asString());
        StringBuilder joined = new StringBuilder();
        for (JsonNode line : lines) {
            joined.append(line.path("message").path("content").asText());
        }
        assertEquals(text, joined.toString());
        assertTrue(lines.size() > 2, "one line per piece of text: " + lines.size());
        JsonNode last = lines.get(lines.size() - 1);
        assertTrue(last.get("done").asBoolean());
        assertEquals(chat.getInt("eval_count"), last.get("eval_count").asInt());
        assertTrue(lines.subList(0, lines.size() - 1).stream().noneMatch(l -> l.get("done").asBoolean()));

        // a prompt alone is the user's message, rendered by the model's template
        JsonPath generated = post("/api/generate", "{\"model\":\"stories\",\"prompt\":\"Tell me a story\","
                + "\"stream\":false," + GREEDY + "}").then().statusCode(200).extract().jsonPath();
        assertEquals(text, generated.getString("response"));
        // raw: the prompt as it is, as llama-server's /completion reads it
        String completion = post("/completion", "{\"prompt\":\"Once upon a time\",\"n_predict\":16,"
                + "\"temperature\":0}").then().statusCode(200).extract().path("content");
        JsonPath raw = post("/api/generate", "{\"model\":\"stories\",\"prompt\":\"Once upon a time\",\"raw\":true,"
                + "\"stream\":false," + GREEDY + "}").then().statusCode(200).extract().jsonPath();
        assertEquals(completion, raw.getString("response"));
        assertEquals("length", raw.getString("done_reason"));
        assertEquals(16, raw.getInt("eval_count"));
        StringBuilder rawStreamed = new StringBuilder();
        for (JsonNode line : lines(post("/api/generate", "{\"model\":\"stories\",\"prompt\":\"Once upon a time\","
                + "\"raw\":true," + GREEDY + "}").then().statusCode(200).extract().asString())) {
            rawStreamed.append(line.get("response").asText());
        }
        assertEquals(completion, rawStreamed.toString());
    }

    /** Options under Ollama's names change the answer as their llama-server names do. */
    @Test
    void optionsAreHonouredOrRefusedByName() {
        JsonPath stopped = post("/api/generate", "{\"prompt\":\"Once upon a time\",\"raw\":true,\"stream\":false,"
                + "\"options\":{\"temperature\":0,\"num_predict\":5}}").then().statusCode(200).extract().jsonPath();
        assertEquals(5, stopped.getInt("eval_count"));
        String seeded = "{\"prompt\":\"Once upon a time\",\"raw\":true,\"stream\":false,\"options\":{\"temperature\":1,"
                + "\"seed\":7,\"top_k\":40,\"num_predict\":12}}";
        String first = post("/api/generate", seeded).then().statusCode(200).extract().path("response");
        assertEquals(first, post("/api/generate", seeded).then().statusCode(200).extract().path("response"));
        assertEquals(first, post("/completion", "{\"prompt\":\"Once upon a time\",\"temperature\":1,\"seed\":7,"
                + "\"top_k\":40,\"n_predict\":12}").then().statusCode(200).extract().path("content"));

        post("/api/chat", "{" + MESSAGES + ",\"options\":{\"num_gpu\":1}}").then().statusCode(400)
                .body("error", containsString("options.num_gpu"));
        post("/api/chat", "{" + MESSAGES + ",\"options\":{\"num_ctx\":100000}}").then().statusCode(400)
                .body("error", containsString("options.num_ctx"));
        post("/api/chat", "{" + MESSAGES + ",\"options\":{\"num_ctx\":64},\"stream\":false}").then().statusCode(200);
        post("/api/chat", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\",\"images\":[\"aGk=\"]}]}").then()
                .statusCode(400).body("error", containsString("messages[0].images"));
        post("/api/generate", "{\"prompt\":\"Hi\",\"suffix\":\"end\"}").then().statusCode(400)
                .body("error", containsString("suffix"));
        post("/api/generate", "{\"prompt\":\"Hi\",\"keep_alive\":\"soon\"}").then().statusCode(400)
                .body("error", containsString("keep_alive"));
        post("/api/chat", "{" + MESSAGES + ",\"context_window\":8}").then().statusCode(400)
                .body("error", containsString("context_window"));
        post("/api/chat", "{\"messages\":[{\"role\":\"robot\",\"content\":\"Hi\"}]}").then().statusCode(400)
                .body("error", containsString("messages[0].role"));
        post("/api/pull", "{\"model\":\"llama3\"}").then().statusCode(501).body("error", containsString("pull"));
        post("/api/create", "{\"model\":\"x\"}").then().statusCode(501).body("error", containsString("create"));
        given().delete("/api/delete").then().statusCode(501).body("error", containsString("delete"));
    }

    /** {@code format}: a JSON schema, or {@code "json"}, constrains the real model's answer. */
    @Test
    void formatConstrainsTheAnswer() throws Exception {
        String schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":8}},"
                + "\"required\":[\"name\"],\"additionalProperties\":false}";
        String content = post("/api/chat", "{" + MESSAGES + ",\"stream\":false,\"format\":" + schema
                + ",\"options\":{\"temperature\":0,\"num_predict\":40}}").then().statusCode(200).extract()
                .path("message.content");
        JsonNode answer = JSON.readTree(content);
        assertTrue(answer.get("name").isTextual(), content);
        assertEquals(1, answer.size(), content);
        String json = post("/api/generate", "{\"prompt\":\"Tell me a story\",\"stream\":false,\"format\":\"json\","
                + "\"options\":{\"temperature\":0,\"num_predict\":40}}").then().statusCode(200).extract()
                .path("response");
        assertTrue(json.trim().startsWith("{"), json);
        post("/api/chat", "{" + MESSAGES + ",\"format\":\"yaml\"}").then().statusCode(400)
                .body("error", containsString("format"));
    }

    /** The lists and the description are of the served file; embeddings are OpenAI's vectors. */
    @Test
    void theModelIsListedShownAndEmbeds() throws Exception {
        long size = Files.size(StoriesProfile.model());
        JsonPath tags = given().get("/api/tags").then().statusCode(200).extract().jsonPath();
        assertEquals(1, tags.getList("models").size());
        assertEquals(size, tags.getLong("models[0].size"));
        assertEquals("gguf", tags.getString("models[0].details.format"));
        assertEquals("llama", tags.getString("models[0].details.family"));
        assertEquals(64, tags.getString("models[0].digest").length());
        String name = tags.getString("models[0].name");
        int context = given().get("/v1/models").then().extract().path("data[0].context_length");
        given().get("/api/ps").then().statusCode(200).body("models[0].name", equalTo(name))
                .body("models[0].context_length", equalTo(context));
        post("/api/show", "{\"model\":\"" + name + "\"}").then().statusCode(200)
                .body("model_info.'general.architecture'", equalTo("llama"))
                .body("model_info.'llama.context_length'", equalTo(context))
                .body("capabilities", org.hamcrest.Matchers.hasItems("completion", "embedding"));
        assertTrue(given().get("/api/version").then().statusCode(200).extract().path("version").toString()
                .matches("\\d.*"));

        JsonPath openAi = post("/v1/embeddings", "{\"input\":[\"a cat\",\"a dog\"]}").then().statusCode(200)
                .extract().jsonPath();
        JsonPath ollama = post("/api/embed", "{\"model\":\"" + name + "\",\"input\":[\"a cat\",\"a dog\"]}").then()
                .statusCode(200).extract().jsonPath();
        assertEquals(openAi.getList("data[0].embedding"), ollama.getList("embeddings[0]"));
        assertEquals(openAi.getList("data[1].embedding"), ollama.getList("embeddings[1]"));
        assertEquals(openAi.getInt("usage.prompt_tokens"), ollama.getInt("prompt_eval_count"));
        assertEquals(openAi.getList("data[0].embedding"), post("/api/embeddings", "{\"prompt\":\"a cat\"}").then()
                .statusCode(200).extract().jsonPath().getList("embedding"));
        post("/api/embed", "{\"input\":\"a cat\",\"truncate\":true}").then().statusCode(400)
                .body("error", containsString("truncate"));
    }

    /** Ollama's and OpenAI's clients at once on two streams: each answer is the one it gets alone. */
    @Test
    void clientsOfBothApisAtOnceEachGetTheirAnswerAlone() throws Exception {
        List<String[]> requests = List.of(
                new String[]{"/api/chat", "{" + MESSAGES + ",\"stream\":false," + GREEDY + "}", "message.content"},
                new String[]{"/api/generate", "{\"prompt\":\"Once upon a time\",\"raw\":true,\"stream\":false,"
                        + GREEDY + "}", "response"},
                new String[]{"/v1/chat/completions", "{" + MESSAGES + ",\"max_tokens\":16,\"temperature\":0}",
                        "choices[0].message.content"});
        StoriesServerTest.assertAnswersAtOnceAsAlone(requests, 6);
    }

    private static List<JsonNode> lines(String body) throws Exception {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : body.split("\n")) {
            if (!line.isBlank()) {
                lines.add(JSON.readTree(line));
            }
        }
        return lines;
    }
}
