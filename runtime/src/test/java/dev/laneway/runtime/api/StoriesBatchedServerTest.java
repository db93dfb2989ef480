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
 * the prompt computed once and copied to the other choices, and stream interleaved.
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
