package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Device timeouts in the middle of a generation, with three retries per step. One fault in a step: the step runs
 * again on a fresh context and the answer is exact. Four in the same step, its whole budget: that request gets a clean
 * device error with the diagnostic, the diagnostic is at {@code /v1/diagnostics} and in the readiness data, the device
 * is out of service (readiness down, requests refused at once with {@code Retry-After}) until the probe three seconds
 * later passes, and the next request is exact again.
 */
@QuarkusTest
@TestProfile(ChaosProfiles.Pinpointed.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChaosPinpointedServerTest {
    private static final Golden.Record ONCE = Golden.stories260K().get(0);

    private static Response complete(int maxTokens, boolean stream) {
        return StoriesServerTest.post("/v1/completions", "{\"prompt\":\"" + ONCE.prompt() + "\",\"max_tokens\":"
                + maxTokens + ",\"temperature\":0,\"stream\":" + stream + "}");
    }

    @Test
    @Order(1)
    void aStepThatFailsItsBudgetIsACleanDeviceErrorThenTheDeviceIsOutUntilAProbePasses() throws Exception {
        StoriesProfile.awaitReady();
        // fail_at=5:2 faults once: retried; 10:1 to 10:4 fault the same step four times, its whole budget of three
        // retries: the request fails.
        complete(16, false).then().statusCode(503)
                .body("error.type", equalTo("device_error"))
                .body("error.code", equalTo("device_fault"))
                .body("error.message", containsString("position 10, layer 4"));

        Map<String, Object> diagnostics = given().get("/v1/diagnostics").then().statusCode(200).extract().jsonPath()
                .getMap("");
        assertEquals(false, diagnostics.get("healthy"));
        List<Map<String, Object>> faults = given().get("/v1/diagnostics").jsonPath().getList("faults");
        Map<String, Object> fault = faults.get(faults.size() - 1);
        assertEquals(4, fault.get("layer"));
        assertEquals(10, fault.get("position"));
        assertEquals(5, faults.size(), "the retried fault and the four of the failed step are on record");
        assertEquals("chaos:cpu?fail_at=5:2,10:1,10:2,10:3,10:4,40:1,40:2,40:3,40:4", fault.get("device"));
        assertFalse(((List<?>) fault.get("args")).isEmpty(), "argument digests are recorded");
        // the device is out of service: readiness is down, and a request is refused at once, saying when to retry
        given().get("/q/health/ready").then().statusCode(503)
                .body("checks.find { it.name == 'model' }.data.reason", containsString("out of service"))
                .body("checks.find { it.name == 'model' }.data.breaker", equalTo("open"))
                .body("checks.find { it.name == 'model' }.data.'fault.0'", containsString("device-fault"));
        Response refused = complete(16, false);
        refused.then().statusCode(503).body("error.code", equalTo("device_unavailable"))
                .body("error.message", containsString("out of service"));
        assertTrue(Integer.parseInt(refused.header("Retry-After")) >= 1, refused.header("Retry-After"));
        assertEquals(5, given().get("/v1/diagnostics").jsonPath().getList("faults").size(), "refused, not run");

        awaitReadiness();
        String text = complete(16, false).then().statusCode(200).extract().path("choices[0].text");
        assertTrue(ONCE.completionText().startsWith(text) && text.length() > 40, text);
        given().get("/q/health/ready").then().statusCode(200);
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"));
    }

    /** Waits (bounded) for the probe after the backoff to put the device back in service. */
    private static void awaitReadiness() throws InterruptedException {
        for (int i = 0; i < 800 && given().get("/q/health/ready").statusCode() != 200; i++) {
            Thread.sleep(10);
        }
        given().get("/q/health/ready").then().statusCode(200);
    }

    @Test
    @Order(2)
    void aTimeoutMidStreamEndsTheStreamWithAnErrorEventAndNoDone() throws Exception {
        String body = complete(64, true).then().statusCode(200).extract().asString();
        String[] events = body.split("\n\n");
        String last = events[events.length - 1];
        assertTrue(last.startsWith("data: {\"error\":"), last);
        assertTrue(last.contains("device_error") && last.contains("position 40, layer 4"), last);
        assertFalse(body.contains("[DONE]"), body);
        assertTrue(events.length > 10, "tokens were streamed before the fault");
        awaitReadiness();
        complete(16, false).then().statusCode(200);
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"));
    }
}
