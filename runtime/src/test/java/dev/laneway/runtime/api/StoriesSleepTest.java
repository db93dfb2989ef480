package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.laneway.runtime.api.StoriesServerTest.post;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real server with {@code --sleep-idle-seconds 1}: an idle model is closed and the next request that needs it
 * opens it again, with the same answers; what only describes the model does not wake it; a request holds the model
 * awake for as long as it runs. And the model's names ({@code --alias a,b,c}) and tags.
 */
@QuarkusTest
@TestProfile(StoriesProfile.Sleeping.class)
class StoriesSleepTest {
    private static final String COMPLETION = "{\"prompt\":\"Once upon a time\",\"n_predict\":16,\"temperature\":0}";

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    private static boolean sleeping() {
        return given().get("/props").then().statusCode(200).extract().jsonPath().getBoolean("is_sleeping");
    }

    private static void awaitSleep() throws InterruptedException {
        for (int i = 0; i < 200 && !sleeping(); i++) {
            Thread.sleep(50);
        }
        assertTrue(sleeping(), "the model did not sleep");
    }

    /**
     * Ollama's {@code keep_alive}: -1 keeps the model open past the server's idle time; an empty generation with 0
     * closes it at once ({@code done_reason} unload, and {@code /api/ps} lists nothing); the next request opens it
     * with the same answer; a request without it goes back to the server's idle time. A request that asks to close
     * the model while others run closes it only once they have ended, with their answers whole.
     */
    @Test
    void ollamasKeepAliveKeepsOrClosesTheModel() throws Exception {
        String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],\"stream\":false,"
                + "\"options\":{\"temperature\":0,\"num_predict\":16}";
        String answer = post("/api/chat", chat + ",\"keep_alive\":-1}").then().statusCode(200).extract()
                .path("message.content");
        Thread.sleep(2500);
        assertFalse(sleeping(), "keep_alive -1 keeps the model open past the server's idle second");
        given().get("/api/ps").then().statusCode(200).body("models", org.hamcrest.Matchers.hasSize(1))
                .body("models[0].expires_at", org.hamcrest.Matchers.nullValue());

        post("/api/generate", "{\"prompt\":\"\",\"keep_alive\":0}").then().statusCode(200)
                .body("done_reason", equalTo("unload"));
        assertTrue(sleeping(), "keep_alive 0 closes the idle model at once");
        given().get("/api/ps").then().statusCode(200).body("models", org.hamcrest.Matchers.hasSize(0));
        given().get("/api/tags").then().statusCode(200).body("models", org.hamcrest.Matchers.hasSize(1));

        assertEquals(answer, post("/api/chat", chat + ",\"keep_alive\":\"1m\"}").then().statusCode(200).extract()
                .path("message.content"));
        assertFalse(sleeping());
        given().get("/api/ps").then().body("models[0].expires_at", org.hamcrest.Matchers.notNullValue());
        post("/api/generate", "{\"prompt\":\"\"}").then().statusCode(200).body("done_reason", equalTo("load"));
        awaitSleep();  // without keep_alive, the server's idle second again

        ExecutorService clients = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String keep = i == 0 ? ",\"keep_alive\":0}" : ",\"keep_alive\":-1}";
                answers.add(clients.submit(() -> post("/api/chat", chat + keep).then().statusCode(200).extract()
                        .<String>path("message.content")));
            }
            for (Future<String> a : answers) {
                assertEquals(answer, a.get());
            }
        } finally {
            clients.shutdownNow();
        }
        post("/api/generate", "{\"prompt\":\"\",\"keep_alive\":0}").then().statusCode(200);
        assertTrue(sleeping());
    }

    /**
     * Asleep, the model is still described and the server is healthy and ready; several clients at once wake it and
     * each gets the answer the awake model gave; the engine's counts go on across the sleep.
     */
    @Test
    void anIdleModelSleepsAndWakesWithTheSameAnswers() throws Exception {
        String awake = post("/completion", COMPLETION).then().statusCode(200).extract().path("content");
        awaitSleep();
        given().get("/health").then().statusCode(200).body("status", equalTo("ok"));
        given().get("/q/health/ready").then().statusCode(200);
        given().get("/v1/models").then().statusCode(200).body("data[0].id", equalTo(StoriesProfile.ALIAS));
        given().get("/props").then().statusCode(200).body("default_generation_settings.n_ctx", equalTo(2048));
        String metrics = given().get("/metrics").then().statusCode(200).extract().asString();
        assertTrue(sleeping(), "describing the model woke it");
        assertTrue(decodeSteps(metrics) > 0, metrics);

        ExecutorService clients = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                answers.add(clients.submit(() -> post("/completion", COMPLETION).then().statusCode(200).extract()
                        .<String>path("content")));
            }
            for (Future<String> answer : answers) {
                assertEquals(awake, answer.get());
            }
        } finally {
            clients.shutdownNow();
        }
        assertFalse(sleeping());
        assertTrue(decodeSteps(given().get("/metrics").asString()) > decodeSteps(metrics));
    }

    /**
     * A stream that runs longer than the idle time keeps the model awake to its end (the sleep count does not move
     * while it runs), and it ends whole.
     */
    @Test
    void aRunningRequestHoldsTheModelAwake() throws InterruptedException {
        awaitSleep();
        double sleeps = metric(UNLOADS);
        long start = System.nanoTime();
        // Four choices of 2,000 tokens each, two at a time, take seconds on this model: longer than the idle second.
        String stream = post("/v1/completions", "{\"prompt\":\"Once\",\"n\":4,\"max_tokens\":2000,"
                + "\"temperature\":0,\"ignore_eos\":true,\"stream\":true}").then().statusCode(200).extract()
                .asString();
        double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds > 2, "the stream took " + seconds + " s, too short to outlast the idle second");
        assertTrue(stream.endsWith("data: [DONE]\n\n"), stream.substring(Math.max(0, stream.length() - 300)));
        assertEquals(4, stream.split("\"finish_reason\":\"length\"", -1).length - 1);
        assertEquals(sleeps, metric(UNLOADS), "the model slept while a request ran");
        assertFalse(sleeping());
        // Tokenizing needs the model: it wakes it too.
        awaitSleep();
        assertEquals(sleeps + 1, metric(UNLOADS));
        post("/tokenize", "{\"content\":\"Once\"}").then().statusCode(200);
        assertFalse(sleeping());
    }

    /** The model's unloads, its sleeps. */
    private static final String UNLOADS = "laneway_model_unloads_total{model=\"" + StoriesProfile.ALIAS + "\"}";

    private static double metric(String name) {
        return given().get("/q/metrics").asString().lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l ->
                Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElseThrow(() ->
                new AssertionError("no metric " + name));
    }

    /**
     * The model answers to each of its names, the first its id; /v1/models lists them and its tags; another name is
     * a 404 naming the model's id.
     */
    @Test
    void theModelAnswersToEachOfItsNames() {
        JsonPath models = given().get("/v1/models").then().statusCode(200).extract().jsonPath();
        assertEquals(List.of(StoriesProfile.ALIAS, "tiny", "bedtime"), models.getList("data[0].aliases"));
        assertEquals(List.of("small", "test"), models.getList("data[0].tags"));
        for (String name : List.of("tiny", "bedtime", StoriesProfile.ALIAS)) {
            post("/v1/chat/completions", "{\"model\":\"" + name + "\",\"max_tokens\":2,\"messages\":[{\"role\":"
                    + "\"user\",\"content\":\"Hi\"}]}").then().statusCode(200)
                    .body("model", equalTo(StoriesProfile.ALIAS));
            given().get("/v1/models/" + name).then().statusCode(200).body("id", equalTo(StoriesProfile.ALIAS));
        }
        post("/v1/chat/completions", "{\"model\":\"other\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Hi\"}]}").then().statusCode(404);
        given().get("/v1/models/other").then().statusCode(404);
    }

    private static double decodeSteps(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("llamacpp:n_decode_total ")).mapToDouble(l ->
                Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst().orElseThrow();
    }
}
