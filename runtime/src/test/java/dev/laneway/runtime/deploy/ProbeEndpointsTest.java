package dev.laneway.runtime.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Deployment's probes ask paths the server really serves: the server runs a real model, with an API key as in
 * the Deployment, and each probe's request (which carries no key) is answered 200 UP once the model is loaded.
 */
@QuarkusTest
@TestProfile(ProbeEndpointsTest.RealModel.class)
class ProbeEndpointsTest {

    /** The server on the smallest shared model, with an API key. */
    public static class RealModel implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("laneway.model", stories260k().toString(),
                    "laneway.api-key", "probe-test-key",
                    "quarkus.http.test-port", "0");
        }
    }

    @Test
    void everyProbeOfTheDeploymentIsAnsweredUp() throws InterruptedException {
        Container container = KubernetesManifestsTest.onlyContainer(
                KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec());
        List<Probe> probes = List.of(container.getStartupProbe(), container.getReadinessProbe(),
                container.getLivenessProbe());
        for (Probe probe : probes) {
            String path = probe.getHttpGet().getPath();
            Response answer = untilUp(path);
            assertEquals(200, answer.statusCode(), path + " answered " + answer.asString());
            assertEquals("UP", answer.jsonPath().getString("status"), path);
        }
    }

    @Test
    void readinessNamesTheModelItWaitedFor() throws InterruptedException {
        String ready = KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers()
                .get(0).getReadinessProbe().getHttpGet().getPath();
        Response answer = untilUp(ready);
        assertEquals(List.of("stories260K"), answer.jsonPath().getList("checks.data.model"));
        assertEquals(List.of("ready"), answer.jsonPath().getList("checks.data.state"));
    }

    /** The probe's answer once it is 200, or its last answer after a minute of loading. */
    private static Response untilUp(String path) throws InterruptedException {
        Response answer = given().get(path);
        for (int i = 0; i < 600 && answer.statusCode() == 503; i++) {
            Thread.sleep(100);
            answer = given().get(path);
        }
        return answer;
    }

    private static Path stories260k() {
        String configured = System.getProperty("shared.dir");
        Path shared = configured != null ? Path.of(configured) : Path.of("..", "..", "shared");
        Path model = shared.resolve("models").resolve("stories260K").resolve("stories260K.gguf");
        assertTrue(Files.isRegularFile(model), "the shared test model is missing: " + model.toAbsolutePath());
        return model.toAbsolutePath().normalize();
    }
}
