package dev.laneway.runtime.api;

import dev.laneway.spi.RouteDecision;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP side of request routing ({@code --laya}) against a {@link RoutingScriptedModel}: every generation
 * response carries the decision in {@code X-Laneway-Route}, the generation runs with that decision, and a router
 * failure is that request's 502 while the server goes on serving.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.Routed.class)
class RoutedServerTest {
    private static final String HEADER = "X-Laneway-Route";

    @BeforeEach
    void clear() throws InterruptedException {
        StoriesProfile.awaitReady();
        RoutingScriptedModel.RAN_WITH.clear();
    }

    private static RouteDecision ranWith() throws InterruptedException {
        RouteDecision d = RoutingScriptedModel.RAN_WITH.poll(10, TimeUnit.SECONDS);
        assertTrue(d != null, "the generation ran");
        return d;
    }

    @Test
    void aCompletionCarriesItsDecisionAndRunsWithIt() throws InterruptedException {
        ScriptedServerTest.post("/v1/completions", "{\"prompt\":\"code: say:ok\"}").then()
                .statusCode(200)
                .header(HEADER, equalTo("code 0.83 npu"))
                .body("choices[0].text", equalTo("ok"));
        assertEquals(RoutingScriptedModel.CODE, ranWith());
    }

    @Test
    void aStreamedChatCarriesItsDecisionInItsHeaders() throws InterruptedException {
        Response response = ScriptedServerTest.post("/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"say:hi\"}],\"stream\":true}");
        response.then().statusCode(200)
                .contentType(startsWith("text/event-stream"))
                .header(HEADER, equalTo("prose 0.50 cpu"));
        assertTrue(response.asString().endsWith("data: [DONE]\n\n"), response.asString());
        assertEquals(RoutingScriptedModel.PROSE, ranWith());
    }

    @Test
    void aFailedGenerationStillNamesWhereItRan() {
        ScriptedServerTest.post("/v1/completions", "{\"prompt\":\"code: fault:\"}").then()
                .statusCode(503)
                .header(HEADER, equalTo("code 0.83 npu"))
                .body("error.code", equalTo("device_fault"));
    }

    @Test
    void aScorerFailureIsThatRequests502AndTheServerGoesOnServing() throws InterruptedException {
        for (boolean stream : new boolean[]{false, true}) {
            ScriptedServerTest.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":"
                            + "\"scorer-fail: say:no\"}],\"stream\":" + stream + "}").then()
                    .statusCode(502)
                    .contentType(startsWith("application/json"))
                    .header(HEADER, nullValue())
                    .body("error.type", equalTo("router_error"))
                    .body("error.code", equalTo("router_failed"))
                    .body("error.message", equalTo("laya: the scorer failed on this request: kernel 'matmul' "
                            + "timed out"));
        }
        assertTrue(RoutingScriptedModel.RAN_WITH.isEmpty(), "nothing was generated");
        ScriptedServerTest.post("/v1/completions", "{\"prompt\":\"say:still here\"}").then()
                .statusCode(200)
                .header(HEADER, equalTo("prose 0.50 cpu"))
                .body("choices[0].text", equalTo("still here"));
        assertEquals(RoutingScriptedModel.PROSE, ranWith());
    }

    @Test
    void aBadRequestIsRefusedBeforeTheRouterIsAsked() {
        ScriptedServerTest.post("/v1/completions", "{\"prompt\":\"scorer-fail:\",\"max_tokens\":-1}").then()
                .statusCode(400)
                .header(HEADER, nullValue());
    }

    @Test
    void tokenizeIsNoGenerationAndCarriesNoDecision() {
        ScriptedServerTest.post("/tokenize", "{\"content\":\"code: hi\"}").then()
                .statusCode(200)
                .header(HEADER, nullValue());
    }
}
