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
 * Device timeouts in the middle of a generation. One fault in a step: the step runs again on a fresh context and the
 * answer is exact. Two in the same step: that request gets a clean device error with the diagnostic, the diagnostic is
 * at {@code /v1/diagnostics} and in the readiness data, and the next request is exact again.
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
    void aStepFaultedTwiceIsACleanDeviceErrorAndTheNextRequestIsExact() throws Exception {
        StoriesProfile.awaitReady();
        // fail_at=5:2 faults once: retried; 10:3 then 10:4 fault the same step twice: the request fails.
        complete(16, false).then().statusCode(503)
                .body("error.type", equalTo("device_error"))
                .body("error.message", containsString("position 10, layer 4"));

        Map<String, Object> diagnostics = given().get("/v1/diagnostics").then().statusCode(200).extract().jsonPath()
                .getMap("");
        assertEquals(false, diagnostics.get("healthy"));
        List<Map<String, Object>> faults = given().get("/v1/diagnostics").jsonPath().getList("faults");
        Map<String, Object> fault = faults.get(faults.size() - 1);
        assertEquals(4, fault.get("layer"));
        assertEquals(10, fault.get("position"));
        assertEquals(3, faults.size(), "the retried fault and both faults of the failed step are on record");
        assertEquals("chaos:cpu?fail_at=5:2,10:3,10:4,40:1,40:2", fault.get("device"));
        assertFalse(((List<?>) fault.get("args")).isEmpty(), "argument digests are recorded");
        given().get("/q/health/ready").then().statusCode(503)
                .body("checks[0].data.reason", containsString("recovering"))
                .body("checks[0].data.'fault.0'", containsString("device-fault"));

        String text = complete(16, false).then().statusCode(200).extract().path("choices[0].text");
        assertTrue(ONCE.completionText().startsWith(text) && text.length() > 40, text);
        given().get("/q/health/ready").then().statusCode(200);
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"));
    }

    @Test
    @Order(2)
    void aTimeoutMidStreamEndsTheStreamWithAnErrorEventAndNoDone() {
        String body = complete(64, true).then().statusCode(200).extract().asString();
        String[] events = body.split("\n\n");
        String last = events[events.length - 1];
        assertTrue(last.startsWith("data: {\"error\":"), last);
        assertTrue(last.contains("device_error") && last.contains("position 40, layer 2"), last);
        assertFalse(body.contains("[DONE]"), body);
        assertTrue(events.length > 10, "tokens were streamed before the fault");
        complete(16, false).then().statusCode(200);
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"));
    }
}
