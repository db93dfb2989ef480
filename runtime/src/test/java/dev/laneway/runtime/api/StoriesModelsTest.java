package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.laneway.runtime.api.StoriesProfile.Models.PINNED;
import static dev.laneway.runtime.api.StoriesProfile.Models.TINY;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two real models (stories260K, also served as {@code pinned}, and tinystories-656k) behind one server that loads two
 * at once ({@link StoriesProfile.Models}): each request's {@code model} picks its model and gets the answer that model
 * gives alone, a model loads on first use while the others answer, keep-alive unloads it, the least recently used
 * model makes room and the pinned one never does, and eight clients spread over the three models while they load and
 * unload all get whole, right answers.
 */
@QuarkusTest
@TestProfile(StoriesProfile.Models.class)
@TestMethodOrder(MethodOrderer.MethodName.class)
class StoriesModelsTest {
    private static final List<String> MODELS = List.of(StoriesProfile.ALIAS, TINY, PINNED);
    /** Each model's greedy answer, asked alone. */
    private static final Map<String, String> ALONE = new ConcurrentHashMap<>();

    @BeforeEach
    void awaitReady() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    private static Response complete(String model, String prompt) {
        return given().contentType("application/json").body("{\"model\":\"" + model + "\",\"prompt\":\"" + prompt
                + "\",\"max_tokens\":24,\"temperature\":0}").post("/v1/completions");
    }

    private static String answer(String model) {
        Response r = complete(model, "Once upon a time");
        assertEquals(200, r.statusCode(), model + ": " + r.asString());
        assertEquals(model, r.path("model"));
        return r.path("choices[0].text");
    }

    private static String state(String model) {
        return given().get("/v1/models/" + model).then().statusCode(200).extract().path("status.value");
    }

    private static double metric(String series) {
        String metrics = given().get("/q/metrics").asString();
        return metrics.lines().filter(l -> l.startsWith(series + " ")).mapToDouble(l ->
                Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElseThrow(() ->
                new AssertionError("no metric " + series));
    }

    private static double loads(String model) {
        return metric("laneway_model_loads_total{model=\"" + model + "\"}");
    }

    /**
     * One after another: the default model is loaded at startup, tinystories loads on first use, and pinned needs
     * the room of the least recently used one, the default model; the two models answer differently.
     */
    @Test
    void a_eachModelLoadsOnFirstUseAndTheLeastRecentlyUsedMakesRoom() {
        assertEquals("loaded", state(StoriesProfile.ALIAS));
        assertEquals("unloaded", state(TINY));
        for (String model : MODELS) {
            ALONE.put(model, answer(model));
        }
        assertEquals(ALONE.get(StoriesProfile.ALIAS), ALONE.get(PINNED), "the same file answers alike");
        assertNotEquals(ALONE.get(StoriesProfile.ALIAS), ALONE.get(TINY));
        assertEquals("unloaded", state(StoriesProfile.ALIAS));
        assertEquals("loaded", state(TINY));
        assertEquals("loaded", state(PINNED));
        assertEquals("tinystories", given().get("/v1/models/" + TINY).then().extract().path("id"));
        assertEquals(List.of(TINY, PINNED), given().get("/api/ps").then().statusCode(200).extract().jsonPath()
                .getList("models.name"));
    }

    /** Ollama's {@code keep_alive} on a request unloads its model that long after it; the next request loads it again. */
    @Test
    void b_keepAliveUnloadsTheModelAndTheNextRequestLoadsItAgain() throws InterruptedException {
        double before = loads(TINY);
        Response r = given().contentType("application/json").body("{\"model\":\"" + TINY + "\",\"prompt\":\"Once upon"
                + " a time\",\"raw\":true,\"stream\":false,\"keep_alive\":\"1s\",\"options\":{\"temperature\":0,"
                + "\"num_predict\":24}}").post("/api/generate");
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals(ALONE.get(TINY), r.path("response"));
        for (int i = 0; i < 100 && state(TINY).equals("loaded"); i++) {
            Thread.sleep(50);
        }
        assertEquals("unloaded", state(TINY), "keep_alive 1s unloaded it");
        assertEquals(ALONE.get(TINY), answer(TINY));
        assertEquals(before + 1, loads(TINY));
    }

    /**
     * Eight clients, each asking the three models in turn from a different start, three rounds, while a ninth asks
     * for the unpinned models to be unloaded and loaded by hand: the two unpinned models keep taking each other's room
     * while requests run; every answer is the model's own, none fails, the pinned model is never unloaded, and at most
     * two models are loaded at the end.
     */
    @Test
    void c_eightClientsOverThreeModelsWhileTheyLoadAndUnload() throws Exception {
        double pinnedLoads = loads(PINNED);
        double unloads = metric("laneway_model_unloads_total{model=\"" + StoriesProfile.ALIAS + "\"}")
                + metric("laneway_model_unloads_total{model=\"" + TINY + "\"}");
        ExecutorService clients = Executors.newFixedThreadPool(9);
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        try {
            Future<Integer> byHand = clients.submit(() -> {
                int asked = 0;
                for (int i = 0; running.get(); i++) {
                    String model = i % 2 == 0 ? TINY : StoriesProfile.ALIAS;
                    String path = i % 3 == 0 ? "/models/load" : "/models/unload";
                    Response r = given().contentType("application/json").body("{\"model\":\"" + model + "\"}")
                            .post(path);
                    assertEquals(200, r.statusCode(), path + " " + model + ": " + r.asString());
                    asked++;
                    Thread.sleep(20);
                }
                return asked;
            });
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                int first = c;
                done.add(clients.submit(() -> {
                    for (int i = 0; i < 9; i++) {
                        String model = MODELS.get((first + i) % MODELS.size());
                        assertEquals(ALONE.get(model), answer(model), model);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(300, TimeUnit.SECONDS);
            }
            running.set(false);
            assertTrue(byHand.get(60, TimeUnit.SECONDS) > 0);
        } finally {
            running.set(false);
            clients.shutdownNow();
        }
        assertEquals(pinnedLoads, loads(PINNED), "the pinned model was unloaded");
        double after = metric("laneway_model_unloads_total{model=\"" + StoriesProfile.ALIAS + "\"}")
                + metric("laneway_model_unloads_total{model=\"" + TINY + "\"}");
        assertTrue(after > unloads, "the two models never swapped: " + unloads + " -> " + after);
        long loaded = MODELS.stream().filter(m -> state(m).equals("loaded")).count();
        assertTrue(loaded <= 2, loaded + " models loaded");
        assertEquals("loaded", state(PINNED));
    }
}
