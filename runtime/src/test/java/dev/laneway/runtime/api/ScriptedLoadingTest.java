package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;

/**
 * The port answers before the model is loaded: health says loading, generation is refused until it is ready; then
 * health says whether the model's background work is still pending.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.Loading.class)
class ScriptedLoadingTest {

    @Test
    void healthTurnsOkOnceTheModelIsLoaded() throws InterruptedException {
        given().get("/health").then().statusCode(503).body("status", equalTo("loading"));
        given().get("/q/health/ready").then().statusCode(503).body("status", equalTo("DOWN"))
                .body("checks.data.state", hasItem("loading"));
        given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().contentType("application/json").body("{\"prompt\":\"say:x\"}").post("/v1/completions").then()
                .statusCode(503)
                .header("Retry-After", equalTo("1"))
                .body("error.type", equalTo("unavailable_error"))
                .body("error.code", equalTo("model_not_ready"));
        given().get("/v1/models").then().statusCode(503).body("error.code", equalTo("model_not_ready"));

        ScriptedOpener.LOADING.countDown();
        for (int i = 0; i < 200 && given().get("/health").statusCode() != 200; i++) {
            Thread.sleep(25);
        }
        given().get("/health").then().statusCode(200).body("status", equalTo("ok"))
                .body("background_work", equalTo("pending"));
        ScriptedOpener.BACKGROUND.countDown();
        given().get("/health").then().statusCode(200).body("status", equalTo("ok"))
                .body("$", not(hasKey("background_work")));
        given().get("/q/health/ready").then().statusCode(200)
                .body("checks.data.model", hasItem(ScriptedModel.ID))
                .body("checks.data.route", hasItem("scripted-route"))
                .body("checks.data.device", hasItem("cpu"));
        given().contentType("application/json").body("{\"prompt\":\"say:x\"}").post("/v1/completions").then()
                .statusCode(200).body("choices[0].text", equalTo("x"));
    }
}
