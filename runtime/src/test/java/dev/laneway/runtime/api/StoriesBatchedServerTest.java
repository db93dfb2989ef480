package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.laneway.runtime.api.StoriesServerTest.metric;
import static dev.laneway.runtime.api.StoriesServerTest.post;
import static dev.laneway.runtime.api.StoriesServerTest.quoted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real stories260K server with four streams: the {@code n} choices of a request run together in the engine loop,
 * the prompt computed once and copied to the other choices, and stream interleaved; requests of several clients,
 * whatever features they use, answer as they do alone.
 */
@QuarkusTest
@TestProfile(StoriesProfile.FourStreams.class)
class StoriesBatchedServerTest {
    private static final List<Golden.Record> GOLDEN = Golden.stories260K();

    @Test
    void theChoicesOfOneRequestShareThePromptAndDecodeTogether() throws Exception {
        StoriesProfile.awaitReady();
        Golden.Record golden = GOLDEN.get(0);
        double steps = metric("laneway_engine_steps_total");
        double sequences = metric("laneway_engine_step_sequences_total");
        JsonPath json = post("/v1/completions", "{\"prompt\":" + quoted(golden.prompt())
                + ",\"max_tokens\":24,\"temperature\":0,\"n\":4}").then().statusCode(200).extract().jsonPath();
        for (int j = 0; j < 4; j++) {
            String text = json.getString("choices[" + j + "].text");
            assertEquals(j, json.getInt("choices[" + j + "].index"));
            assertTrue(golden.completionText().startsWith(text) && text.length() > 40, "choice " + j + ": " + text);
        }
        int prompt = json.getInt("usage.prompt_tokens");
        assertTrue(json.getInt("timings.cache_n") >= 3 * (prompt - 1),
                "three choices copied the prompt: " + json.getString("timings"));
        // Each choice computes the prompt's last token itself, for its own logits.
        assertTrue(json.getInt("timings.prompt_n") <= prompt + 3, "the prompt was computed once: "
                + json.getString("timings"));
        double ran = metric("laneway_engine_steps_total") - steps;
        double together = metric("laneway_engine_step_sequences_total") - sequences;
        assertTrue(together >= 3 * ran, "sequences per step: " + together + " in " + ran + " steps");
    }

    /**
     * Every request feature, run in the engine loop beside the others by eight clients at once, gives the answer it
     * gives alone: stops, penalties, logit_bias, seeded sampling, GBNF, JSON schemas, json_object, a required tool
     * choice; while a ninth client leaves its stream after the first token, whose slot is free again at the end.
     */
    @Test
    void everyFeatureAnswersTheSameBatchedAsAlone() throws Exception {
        StoriesProfile.awaitReady();
        String story = "\"prompt\":" + quoted(GOLDEN.get(0).prompt()) + ",\"max_tokens\":32";
        String chat = "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me of Lily.\"}],\"max_tokens\":48";
        List<String[]> requests = List.of(
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0,\"stop\":[\"girl\",\"park\"]}"},
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0,\"presence_penalty\":1.5,"
                        + "\"frequency_penalty\":1.0,\"repetition_penalty\":1.3}"},
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0,\"logit_bias\":{\""
                        + GOLDEN.get(0).completionIds()[0] + "\":-100}}"},
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0.9,\"seed\":11,\"n\":2}"},
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0,"
                        + "\"grammar\":\"root ::= (\\\"yes\\\" | \\\"no\\\") \\\" \\\" [a-z ]+ \\\".\\\"\"}"},
                new String[]{"/v1/completions", "{" + story + ",\"temperature\":0,\"json_schema\":{\"type\":\"array\","
                        + "\"items\":{\"type\":\"boolean\"},\"minItems\":2,\"maxItems\":3}}"},
                new String[]{"/v1/chat/completions", "{" + chat + ",\"temperature\":0,"
                        + "\"response_format\":{\"type\":\"json_object\"}}"},
                new String[]{"/v1/chat/completions", "{" + chat.replace("48", "120") + ",\"temperature\":0,"
                        + "\"tool_choice\":\"required\",\"parallel_tool_calls\":false,"
                        + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"pet\",\"parameters\":"
                        + "{\"type\":\"object\",\"properties\":{\"kind\":{\"enum\":[\"cat\",\"dog\"]}},"
                        + "\"required\":[\"kind\"]}}}]}"});
        List<String> alone = new ArrayList<>();
        for (String[] r : requests) {
            alone.add(answer(post(r[0], r[1]).then().statusCode(200).extract().jsonPath()));
        }
        double steps = metric("laneway_engine_steps_total");
        double sequences = metric("laneway_engine_step_sequences_total");
        java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(9);
        try {
            java.util.concurrent.Future<?> leaver = clients.submit(() -> {
                leaveAfterTheFirstToken("{" + story.replace("32", "400") + ",\"temperature\":0,\"stream\":true}");
                return null;
            });
            List<java.util.concurrent.Future<String>> together = new ArrayList<>();
            for (String[] r : requests) {
                together.add(clients.submit(() -> answer(post(r[0], r[1]).then().statusCode(200).extract()
                        .jsonPath())));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertEquals(alone.get(i), together.get(i).get(120, java.util.concurrent.TimeUnit.SECONDS),
                        requests.get(i)[1]);
            }
            leaver.get(120, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            clients.shutdownNow();
        }
        double ran = metric("laneway_engine_steps_total") - steps;
        double rows = metric("laneway_engine_step_sequences_total") - sequences;
        assertTrue(rows >= 1.5 * ran, "the requests ran together: " + rows + " sequences in " + ran + " steps");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (metric("laneway_streams_busy") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(0.0, metric("laneway_streams_busy"), "every stream is free again, the leaver's too");
    }

    /** What a client reads of an answer: each choice's text or message, tool calls and finish reason. */
    private static String answer(JsonPath json) {
        StringBuilder out = new StringBuilder();
        for (int j = 0; j < json.getList("choices").size(); j++) {
            String c = "choices[" + j + "].";
            out.append(j).append(": ").append(json.getString(c + "text")).append(" | ")
                    .append(json.getString(c + "message.content")).append(" | ")
                    .append(json.getString(c + "message.tool_calls.function")).append(" | ")
                    .append(json.getString(c + "finish_reason")).append('\n');
        }
        return out.toString();
    }

    /** A streamed request whose client closes the connection once the first token has come. */
    private void leaveAfterTheFirstToken(String body) throws Exception {
        java.net.URL url = new java.net.URL(io.restassured.RestAssured.baseURI + ":" + io.restassured.RestAssured.port);
        try (java.net.Socket socket = new java.net.Socket(url.getHost(), url.getPort())) {
            socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.io.InputStream in = socket.getInputStream();
            String seen = "";
            byte[] buffer = new byte[256];
            while (!seen.contains("\"text\"")) {
                int n = in.read(buffer);
                assertTrue(n > 0, "the stream started");
                seen += new String(buffer, 0, n, java.nio.charset.StandardCharsets.UTF_8);
            }
        }
    }

    /**
     * With prompt lookup, generations draft where their text repeats itself, and their answers are still llama.cpp's
     * greedy texts; the drafts and those taken show in the timings and the metrics.
     */
    @Test
    void draftedTokensAreVerifiedAndTheAnswersAreLlamaCppsStill() throws Exception {
        StoriesProfile.awaitReady();
        double drafted = metric("laneway_drafted_tokens_total");
        double taken = metric("laneway_drafted_accepted_tokens_total");
        int draftN = 0;
        int accepted = 0;
        for (Golden.Record golden : GOLDEN) {
            JsonPath json = post("/v1/completions", "{\"prompt\":" + quoted(golden.prompt()) + ",\"max_tokens\":"
                    + golden.completionIds().length + ",\"temperature\":0}").then().statusCode(200).extract()
                    .jsonPath();
            assertEquals(golden.completionText(), json.getString("choices[0].text"));
            Integer n = json.get("timings.draft_n");  // absent where nothing was drafted
            draftN += n == null ? 0 : n;
            accepted += n == null ? 0 : json.getInt("timings.draft_n_accepted");
        }
        assertTrue(accepted > 0 && accepted <= draftN, accepted + " of " + draftN + " drafts taken");
        assertEquals(draftN, metric("laneway_drafted_tokens_total") - drafted, 0.0);
        assertEquals(accepted, metric("laneway_drafted_accepted_tokens_total") - taken, 0.0);
    }

    @Test
    void streamedChoicesInterleaveAndEachReassemblesToItsText() throws Exception {
        StoriesProfile.awaitReady();
        Golden.Record golden = GOLDEN.get(1);
        String body = "{\"prompt\":" + quoted(golden.prompt()) + ",\"max_tokens\":24,\"temperature\":0,\"n\":3";
        String whole = post("/v1/completions", body + "}").then().statusCode(200).extract().path("choices[0].text");
        List<JsonPath> chunks = ServerSentEvents.chunks(post("/v1/completions", body + ",\"stream\":true}").then()
                .statusCode(200).extract().asString());
        List<StringBuilder> texts = List.of(new StringBuilder(), new StringBuilder(), new StringBuilder());
        List<Integer> order = new ArrayList<>();
        for (JsonPath chunk : chunks) {
            if (chunk.getList("choices").isEmpty()) {
                continue;
            }
            int index = chunk.getInt("choices[0].index");
            texts.get(index).append(chunk.getString("choices[0].text"));
            if (order.isEmpty() || order.get(order.size() - 1) != index) {
                order.add(index);
            }
        }
        for (int j = 0; j < 3; j++) {
            assertEquals(whole, texts.get(j).toString(), "choice " + j);
        }
        assertTrue(order.size() > 3, "the choices' chunks interleave: " + order);
    }
}
