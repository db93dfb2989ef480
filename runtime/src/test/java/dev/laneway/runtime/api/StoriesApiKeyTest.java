package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** With {@code --api-key}, every endpoint but the health checks needs the key. */
@QuarkusTest
@TestProfile(StoriesProfile.WithApiKey.class)
class StoriesApiKeyTest {

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }
    private static final String COMPLETION = "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0}";

    @Test
    void refusesRequestsWithoutTheKey() {
        given().contentType("application/json").body(COMPLETION).post("/v1/completions").then()
                .statusCode(401)
                .header("WWW-Authenticate", equalTo("Bearer"))
                .body("error.type", equalTo("authentication_error"))
                .body("error.code", equalTo("invalid_api_key"));
        given().get("/v1/models").then().statusCode(401);
        given().get("/q/metrics").then().statusCode(401);
        given().get("/no-such-path").then().statusCode(401);
    }

    @Test
    void refusesAWrongKey() {
        for (String key : new String[]{"sk-wrong", StoriesProfile.API_KEY + "x", StoriesProfile.API_KEY.substring(1)}) {
            given().header("Authorization", "Bearer " + key).get("/v1/models").then().statusCode(401)
                    .body("error.message", equalTo("the API key is not valid"));
        }
        given().header("Authorization", StoriesProfile.API_KEY).get("/v1/models").then().statusCode(401);
    }

    @Test
    void servesRequestsWithTheKey() {
        given().header("Authorization", "Bearer " + StoriesProfile.API_KEY).contentType("application/json")
                .body(COMPLETION).post("/v1/completions").then()
                .statusCode(200)
                .body("choices[0].text", equalTo(", there was a"));
        given().header("Authorization", "Bearer " + StoriesProfile.API_KEY).get("/v1/models").then().statusCode(200);
    }

    /**
     * Cross-origin pages on the allow-list (https://chat.example, any loopback origin) may read answers: their
     * preflight is answered before the key is asked for, and an answer to them carries their origin; any other
     * origin gets no CORS header, on its preflight or its request.
     */
    @Test
    void pagesOfAllowedOriginsMayReadAnswersAndOthersMayNot() {
        for (String origin : new String[]{"https://chat.example", "http://localhost:5173", "http://127.0.0.1",
                "http://[::1]:3000"}) {
            given().header("Origin", origin).header("Access-Control-Request-Method", "POST")
                    .header("Access-Control-Request-Headers", "Authorization, Content-Type")
                    .options("/v1/chat/completions").then().statusCode(200)
                    .header("Access-Control-Allow-Origin", equalTo(origin))
                    .header("Access-Control-Allow-Methods", equalTo(CorsFilter.METHODS));
            given().header("Origin", origin).header("Authorization", "Bearer " + StoriesProfile.API_KEY)
                    .get("/v1/models").then().statusCode(200).header("Access-Control-Allow-Origin", equalTo(origin));
        }
        for (String origin : new String[]{"https://evil.example", "http://localhost.evil.example",
                "https://chat.example.evil", "null"}) {
            given().header("Origin", origin).header("Access-Control-Request-Method", "POST")
                    .options("/v1/chat/completions").then().statusCode(200)
                    .header("Access-Control-Allow-Origin", org.hamcrest.Matchers.nullValue());
            given().header("Origin", origin).header("Authorization", "Bearer " + StoriesProfile.API_KEY)
                    .get("/v1/models").then().statusCode(200)
                    .header("Access-Control-Allow-Origin", org.hamcrest.Matchers.nullValue());
        }
        // a request that is not a preflight still needs the key
        given().header("Origin", "https://chat.example").get("/v1/models").then().statusCode(401);
    }

    /** The key is never told back: no readiness data, metric, diagnostic, property or slot report holds it. */
    @Test
    void noAnswerHoldsTheKey() {
        for (String path : new String[]{"/q/health/ready", "/q/health/live", "/health", "/q/metrics", "/metrics",
                "/v1/diagnostics", "/props", "/slots", "/v1/models", "/q/health"}) {
            String body = given().header("Authorization", "Bearer " + StoriesProfile.API_KEY).get(path).asString();
            assertFalse(body.contains(StoriesProfile.API_KEY), path + " holds the key");
        }
        String refused = given().header("Authorization", "Bearer " + StoriesProfile.API_KEY + "x").get("/v1/models")
                .asString();
        assertFalse(refused.contains(StoriesProfile.API_KEY), "the refusal of a wrong key echoes it");
    }

    @Test
    void healthChecksNeedNoKey() {
        given().get("/health").then().statusCode(200).body("status", equalTo("ok"));
        given().get("/q/health/ready").then().statusCode(200);
        given().get("/q/health/live").then().statusCode(200);
    }
}
