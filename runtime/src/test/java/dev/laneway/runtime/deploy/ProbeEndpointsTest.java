package dev.laneway.runtime.deploy;

import dev.laneway.runtime.api.StoriesProfile;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The Deployment's probes ask paths the server really serves: the server runs the real stories260K model with an API
 * key, as the Deployment does, and each probe's request (which carries no key) is answered 200 UP once the model is
 * loaded.
 */
@QuarkusTest
@TestProfile(StoriesProfile.WithApiKey.class)
class ProbeEndpointsTest {

    @Test
    void everyProbeOfTheDeploymentIsAnsweredUp() throws InterruptedException {
        Container container = KubernetesManifestsTest.onlyContainer(
                KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec());
        List<Probe> probes = List.of(container.getStartupProbe(), container.getReadinessProbe(),
                container.getLivenessProbe());
        for (Probe probe : probes) {
            String path = probe.getHttpGet().getPath();
            Response answer = untilLoaded(path);
            assertEquals(200, answer.statusCode(), path + " answered " + answer.asString());
            assertEquals("UP", answer.jsonPath().getString("status"), path);
        }
    }

    @Test
    void readinessNamesTheModelItWaitedFor() throws InterruptedException {
        String ready = KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers()
                .get(0).getReadinessProbe().getHttpGet().getPath();
        Response answer = untilLoaded(ready);
        assertEquals(List.of("stories260K"), answer.jsonPath().getList("checks.data.model"));
        assertEquals(List.of("ready"), answer.jsonPath().getList("checks.data.state"));
    }

    /** The probe's answer once the model is no longer loading, or after a minute of loading. */
    private static Response untilLoaded(String path) throws InterruptedException {
        for (int i = 0; i < 600 && "loading".equals(given().get("/health").path("status")); i++) {
            Thread.sleep(100);
        }
        return given().get(path);
    }
}
