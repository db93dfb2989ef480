package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;

/**
 * {@code --metrics-open} with an API key: scrapers read {@code /metrics} and {@code /q/metrics} without the key; every
 * other path, the API and the descriptions of the model, still needs it, however the path is spelled.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.OpenMetrics.class)
class OpenMetricsTest {

    @Test
    void theMetricsNeedNoKeyAndNothingElseIsOpened() {
        given().get("/metrics").then().statusCode(200).body(containsString("vllm:kv_cache_usage_perc"))
                .body(containsString("llamacpp:requests_processing"));
        given().get("/q/metrics").then().statusCode(200).body(containsString("vllm:num_requests_waiting"));
        for (String path : new String[]{"/v1/models", "/props", "/slots", "/api/tags", "/metrics/../v1/models",
                "/q/metrics/../../v1/models", "/metrics/x", "/v1/diagnostics"}) {
            given().urlEncodingEnabled(false).get(path).then().statusCode(401);
        }
        given().contentType("application/json").body("{\"prompt\":\"Once\",\"max_tokens\":2}")
                .post("/v1/completions").then().statusCode(401);
        given().header("Authorization", "Bearer " + ScriptedProfile.OpenMetrics.KEY).get("/v1/models").then().statusCode(200);
    }
}
