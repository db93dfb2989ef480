package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.laneway.runtime.api.ScriptedServerTest.post;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several models behind one server ({@link ScriptedProfile.Models}): the request's {@code model} picks one, a model
 * loads on first use, the memory budget unloads the idle one to make room and refuses the one that never fits with the
 * numbers, a load waits for the model in use to finish rather than failing, and llama-server's router endpoints load
 * and unload by hand. The tests run in order, each from the state the one before left.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.Models.class)
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.MethodName.class)
class ScriptedModelsTest {

    private static String state(String id) {
        return given().get("/v1/models/" + id).then().statusCode(200).extract().path("status.value");
    }

    private static Response chat(String model, String text) {
        return post("/v1/chat/completions", "{\"model\":\"" + model + "\",\"max_tokens\":50,\"messages\":[{\"role\":"
                + "\"user\",\"content\":\"" + text + "\"}]}");
    }

    @Test
    void a_theModelsAreListedWithTheirStateAndOnlyTheDefaultIsLoaded() {
        JsonPath list = given().get("/v1/models").then().statusCode(200).extract().jsonPath();
        assertEquals(List.of("a", "b", "big"), list.getList("data.id"), "README.txt is no model");
        assertEquals(List.of("loaded", "unloaded", "unloaded"), list.getList("data.status.value"));
        assertEquals("scripted", list.getString("data[0].architecture"));
        assertEquals(null, list.getString("data[1].architecture"), "unknown until it has been loaded");
        assertEquals(List.of("a", "b", "big"), given().get("/api/tags").then().statusCode(200).extract()
                .jsonPath().getList("models.name"));
        assertEquals(List.of("a"), given().get("/api/ps").then().statusCode(200).extract().jsonPath()
                .getList("models.name"));
    }

    @Test
    void b_aRequestPicksItsModelWhichLoadsOnFirstUseInPlaceOfTheIdleOne() {
        Response answer = chat("b", "say:from b");
        assertEquals(200, answer.statusCode(), answer.asString());
        assertEquals("b", answer.path("model"));
        assertEquals("from b", answer.path("choices[0].message.content"));
        assertEquals("loaded", state("b"));
        assertEquals("unloaded", state("a"), "a and b do not fit the budget together");
        Response byDefault = post("/v1/completions", "{\"prompt\":\"say:default\",\"max_tokens\":20}");
        assertEquals(200, byDefault.statusCode(), byDefault.asString());
        assertEquals("a", byDefault.path("model"), "a request that names no model gets the first");
        assertEquals("unloaded", state("b"));
    }

    @Test
    void c_aModelThatNeverFitsAndAnUnknownOneAreRefusedByName() {
        Response big = chat("big", "say:x");
        assertEquals(503, big.statusCode(), big.asString());
        String message = big.path("error.message");
        assertTrue(message.contains("big needs 5 MiB") && message.contains("budget is 4 MiB"), message);
        assertEquals("loaded", state("a"), "the refused load unloaded nothing");
        Response unknown = chat("nobody", "say:x");
        assertEquals(404, unknown.statusCode());
        assertTrue(unknown.<String>path("error.message").contains("'a', 'b', 'big'"), unknown.asString());
        assertEquals(200, chat("a", "say:still here").statusCode(), "the server goes on serving");
    }

    /**
     * While a generation runs on {@code a}, a request for {@code b} needs {@code a} unloaded: it waits for the
     * generation to end and is answered, and the running one finishes whole.
     */
    @Test
    void d_aLoadWaitsForTheModelInUseInsteadOfFailing() throws Exception {
        ScriptedModel.hold = new CountDownLatch(1);
        try {
            CompletableFuture<Response> running = CompletableFuture.supplyAsync(() -> post("/v1/completions",
                    "{\"model\":\"a\",\"prompt\":\"hold:\",\"max_tokens\":3}"));
            awaitRunning("a");
            CompletableFuture<Response> waiting = CompletableFuture.supplyAsync(() -> chat("b", "say:after"));
            Thread.sleep(300);
            assertFalse(waiting.isDone(), "b cannot load while a is in use");
            assertEquals("loaded", state("a"));
            ScriptedModel.hold.countDown();
            Response first = running.get(20, TimeUnit.SECONDS);
            assertEquals(200, first.statusCode(), first.asString());
            assertEquals("hhh", first.path("choices[0].text"));
            Response second = waiting.get(20, TimeUnit.SECONDS);
            assertEquals(200, second.statusCode(), second.asString());
            assertEquals("after", second.path("choices[0].message.content"));
            assertEquals("unloaded", state("a"));
        } finally {
            ScriptedModel.hold.countDown();
        }
    }

    private static void awaitRunning(String model) throws InterruptedException {
        for (int i = 0; i < 400; i++) {
            String metrics = given().get("/q/metrics").asString();
            if (metrics.contains("laneway_model_requests_running{model=\"" + model + "\"} 1.0")) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the generation on " + model + " never ran");
    }

    @Test
    void e_llamaServersRouterEndpointsLoadAndUnloadByHand() {
        Response loaded = post("/models/load", "{\"model\":\"a\"}");
        assertEquals(200, loaded.statusCode(), loaded.asString());
        assertEquals(Boolean.TRUE, loaded.path("success"));
        assertEquals("loaded", state("a"));
        assertEquals("unloaded", state("b"));
        Response unloaded = post("/models/unload", "{\"model\":\"a\"}");
        assertEquals(Boolean.TRUE, unloaded.path("success"));
        assertEquals("unloaded", state("a"));
        assertEquals(List.of(), given().get("/api/ps").then().extract().jsonPath().getList("models"));
        assertEquals(404, post("/models/load", "{\"model\":\"nobody\"}").statusCode());
        Response extra = post("/models/load", "{\"model\":\"a\",\"autoload\":true}");
        assertEquals(400, extra.statusCode());
        assertTrue(extra.<String>path("error.message").contains("autoload"), extra.asString());
    }

    /** Each model's loads, unloads and state under the model label; the server's gauges sum the models. */
    @Test
    void f_theMetricsCountEachModelsLoadsUnderItsName() {
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Map<String, Double> loads = Map.of("a", value(metrics, "laneway_model_loads_total{model=\"a\"}"),
                "b", value(metrics, "laneway_model_loads_total{model=\"b\"}"));
        assertTrue(loads.get("a") >= 3 && loads.get("b") >= 2, loads.toString());
        assertEquals(0.0, value(metrics, "laneway_model_loads_total{model=\"big\"}"));
        assertTrue(value(metrics, "laneway_model_unloads_total{model=\"a\"}") >= 3, metrics);
        assertEquals(0.0, value(metrics, "laneway_model_loaded{model=\"a\"}"));
    }

    private static double value(String metrics, String series) {
        return metrics.lines().filter(l -> l.startsWith(series + " ")).findFirst()
                .map(l -> Double.parseDouble(l.substring(series.length() + 1).strip()))
                .orElseThrow(() -> new AssertionError(series + " missing from\n" + metrics));
    }
}
