package dev.laneway.runtime.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.gatewayapi.v1.HTTPRoute;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The manifests under {@code deploy/kubernetes} are valid Kubernetes objects and fit together and with the image:
 * the Service and the autoscaler reach the Deployment, and the Deployment runs the image the way it is built.
 */
class KubernetesManifestsTest {
    private static final Path DOCKERFILE = Path.of("..", "src", "main", "docker", "Dockerfile.jvm");
    private static final Path ENTRYPOINT = Path.of("..", "src", "main", "docker", "laneway-entrypoint");

    @Test
    void everyManifestIsATypedKubernetesObject() {
        List<HasMetadata> objects = KubernetesManifests.all();
        Set<String> kinds = objects.stream().map(HasMetadata::getKind).collect(Collectors.toSet());
        assertEquals(Set.of("Deployment", "Service", "HorizontalPodAutoscaler", "PersistentVolumeClaim"), kinds);
        for (HasMetadata object : objects) {
            assertNotNull(object.getMetadata().getName(), object.getKind() + " has no name");
            assertEquals("laneway", object.getMetadata().getLabels().get("app.kubernetes.io/name"),
                    object.getKind() + " " + object.getMetadata().getName());
        }
    }

    @Test
    void aMisspeltFieldFailsTheReading() {
        String yaml = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: x}
                spec:
                  template:
                    spec:
                      containers:
                        - name: x
                          livenessProbes: {httpGet: {path: /q/health/live, port: 8080}}
                """;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KubernetesManifests.read("broken.yaml", yaml));
        assertTrue(e.getMessage().startsWith("broken.yaml, document 1 (apps/v1 Deployment): "), e.getMessage());
        assertTrue(e.getMessage().contains("\"livenessProbes\""), e.getMessage());
    }

    @Test
    void aWrongTypeOrAnUnknownKindFailsTheReading() {
        IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                () -> KubernetesManifests.read("t.yaml",
                        "apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: two}\n"));
        assertTrue(type.getMessage().contains("replicas"), type.getMessage());
        IllegalArgumentException kind = assertThrows(IllegalArgumentException.class,
                () -> KubernetesManifests.read("k.yaml", "---\napiVersion: v1\nkind: Service\n---\n"
                        + "apiVersion: extensions/v1beta1\nkind: Deployment\n"));
        assertTrue(kind.getMessage().startsWith("k.yaml, document 2: 'extensions/v1beta1 Deployment' is not"),
                kind.getMessage());
    }

    @Test
    void theDeploymentRunsTheImageAsItIsBuilt() throws IOException {
        Deployment deployment = KubernetesManifests.one(Deployment.class);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        Container container = onlyContainer(pod);
        String dockerfile = Files.readString(DOCKERFILE);

        ContainerPort http = port(container, "http");
        assertEquals(Integer.parseInt(dockerfileValue(dockerfile, "EXPOSE (\\d+)")), http.getContainerPort());
        assertEquals(dockerfileValue(dockerfile, "LANEWAY_PORT=(\\d+)"), Integer.toString(http.getContainerPort()));
        assertEquals(List.of("serve"), container.getArgs());

        // The image's user, and a pod that may not run as root.
        assertEquals(Long.parseLong(dockerfileValue(dockerfile, "(?m)^USER (\\d+)$")),
                pod.getSecurityContext().getRunAsUser());
        assertEquals(Boolean.TRUE, pod.getSecurityContext().getRunAsNonRoot());

        // The selector picks the pods of this template.
        Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertTrue(podLabels.entrySet().containsAll(deployment.getSpec().getSelector().getMatchLabels().entrySet()));

        // The model is read from a read-only /models; what the server writes goes to writable volumes, since the
        // root file system is read-only.
        Map<String, VolumeMount> mounts = container.getVolumeMounts().stream()
                .collect(Collectors.toMap(VolumeMount::getMountPath, m -> m));
        Set<String> volumes = pod.getVolumes().stream().map(Volume::getName).collect(Collectors.toSet());
        mounts.values().forEach(m -> assertTrue(volumes.contains(m.getName()), "no volume " + m.getName()));
        assertEquals(Boolean.TRUE, mounts.get("/models").getReadOnly());
        assertEquals(Boolean.TRUE, container.getSecurityContext().getReadOnlyRootFilesystem());
        String cacheDir = dockerfileValue(dockerfile, "LANEWAY_CACHE_DIR=(\\S+)");
        assertTrue(mounts.containsKey(cacheDir), mounts.keySet()::toString);
        assertTrue(mounts.containsKey("/tmp"), mounts.keySet()::toString);
        assertTrue(env(container, "LANEWAY_MODEL").getValue().startsWith("/models/"));

        // The key comes from a Secret, never from the manifest.
        EnvVar apiKey = env(container, "LANEWAY_API_KEY");
        assertEquals(null, apiKey.getValue());
        assertNotNull(apiKey.getValueFrom().getSecretKeyRef().getName());
        assertNotNull(apiKey.getValueFrom().getSecretKeyRef().getKey());

        // Every LANEWAY_* variable set here is one the image's entry point or the server knows.
        String entrypoint = Files.readString(ENTRYPOINT);
        for (EnvVar variable : container.getEnv()) {
            assertTrue(entrypoint.contains(variable.getName()), variable.getName() + " is unknown to " + ENTRYPOINT);
        }
    }

    @Test
    void theDeploymentGivesResourcesAndTimeTheServerNeeds() throws Exception {
        PodSpec pod = KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec();
        Container container = onlyContainer(pod);

        // The heap is sized from the memory limit; a request below it would let the node overcommit.
        Quantity memoryLimit = container.getResources().getLimits().get("memory");
        assertNotNull(memoryLimit, "no memory limit");
        assertEquals(Quantity.getAmountInBytes(memoryLimit),
                Quantity.getAmountInBytes(container.getResources().getRequests().get("memory")));
        assertNotNull(container.getResources().getRequests().get("cpu"), "the autoscaler needs a CPU request");

        // After SIGTERM the server gives admitted requests laneway.shutdown.grace-seconds, the clients of those it
        // ends 5 s, and the answers being written quarkus.shutdown.timeout; the pod must not be killed before that.
        Properties application = new Properties();
        try (var in = Files.newBufferedReader(Path.of("src", "main", "resources", "application.properties"))) {
            application.load(in);
        }
        Duration shutdown = Duration.parse("PT" + application.getProperty("quarkus.shutdown.timeout").toUpperCase());
        int grace = Integer.parseInt(dev.laneway.runtime.serve.LanewayConfig.Shutdown.class
                .getMethod("graceSeconds").getAnnotation(io.smallrye.config.WithDefault.class).value());
        long drain = grace + 5 + shutdown.toSeconds();
        assertTrue(pod.getTerminationGracePeriodSeconds() > drain,
                "grace period " + pod.getTerminationGracePeriodSeconds() + "s, the server's drain " + drain + "s");

        // Loading a model takes time: the startup probe holds liveness back for at least ten minutes.
        Probe startup = container.getStartupProbe();
        assertTrue(startup.getPeriodSeconds() * startup.getFailureThreshold() >= 600,
                "startup probe allows only " + startup.getPeriodSeconds() * startup.getFailureThreshold() + "s");
        for (Probe probe : List.of(startup, container.getReadinessProbe(), container.getLivenessProbe())) {
            assertEquals("http", probe.getHttpGet().getPort().getStrVal());
            assertTrue(probe.getHttpGet().getPath().startsWith("/q/health/"), probe.getHttpGet().getPath());
        }
    }

    @Test
    void theServiceReachesTheDeploymentsHttpPort() {
        Deployment deployment = KubernetesManifests.one(Deployment.class);
        Service service = KubernetesManifests.one(Service.class);
        Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        assertFalse(service.getSpec().getSelector().isEmpty());
        assertTrue(podLabels.entrySet().containsAll(service.getSpec().getSelector().entrySet()));
        Container container = onlyContainer(deployment.getSpec().getTemplate().getSpec());
        for (ServicePort port : service.getSpec().getPorts()) {
            String target = port.getTargetPort().getStrVal();
            assertNotNull(target, "target ports are named, so they follow the container");
            port(container, target);
        }
    }

    @Test
    void theAutoscalerScalesTheDeployment() {
        Deployment deployment = KubernetesManifests.one(Deployment.class);
        HorizontalPodAutoscaler hpa = KubernetesManifests.one(HorizontalPodAutoscaler.class);
        assertEquals("Deployment", hpa.getSpec().getScaleTargetRef().getKind());
        assertEquals(deployment.getApiVersion(), hpa.getSpec().getScaleTargetRef().getApiVersion());
        assertEquals(deployment.getMetadata().getName(), hpa.getSpec().getScaleTargetRef().getName());
        assertTrue(hpa.getSpec().getMinReplicas() >= 1);
        assertTrue(hpa.getSpec().getMinReplicas() <= hpa.getSpec().getMaxReplicas());
    }

    @Test
    void theModelsVolumeIsTheClaim() {
        PodSpec pod = KubernetesManifests.one(Deployment.class).getSpec().getTemplate().getSpec();
        PersistentVolumeClaim claim = KubernetesManifests.one(PersistentVolumeClaim.class);
        Volume models = pod.getVolumes().stream().filter(v -> v.getPersistentVolumeClaim() != null).findFirst()
                .orElseThrow();
        assertEquals(claim.getMetadata().getName(), models.getPersistentVolumeClaim().getClaimName());
        assertEquals(Boolean.TRUE, models.getPersistentVolumeClaim().getReadOnly());
        // Every replica mounts it, on whatever node it runs.
        assertTrue(claim.getSpec().getAccessModes().stream().anyMatch(m -> m.endsWith("Many")),
                claim.getSpec().getAccessModes()::toString);
    }

    /**
     * The inference gateway's pieces fit the Deployment: the route, read strictly by the Gateway API's own types, sends
     * requests to the InferencePool that the Inference Extension's chart makes from the values (named by the release,
     * {@code laneway}); the pool selects the Deployment's pods on their serving port and reads them as vLLM servers;
     * the pods serve /metrics open to the picker.
     */
    @Test
    void theInferenceGatewaysRouteAndPoolReachTheReplicas() throws IOException {
        List<HasMetadata> route = KubernetesManifests.read(KubernetesManifests.INFERENCE_POOL.resolve("httproute.yaml"));
        assertEquals(1, route.size());
        HTTPRoute httpRoute = (HTTPRoute) route.get(0);
        var backend = httpRoute.getSpec().getRules().get(0).getBackendRefs().get(0);
        assertEquals("inference.networking.k8s.io", backend.getGroup());
        assertEquals("InferencePool", backend.getKind());
        assertEquals("laneway", backend.getName());
        assertEquals("Gateway", httpRoute.getSpec().getParentRefs().get(0).getKind());

        JsonNode values = new ObjectMapper(new YAMLFactory()).readTree(
                KubernetesManifests.INFERENCE_POOL.resolve("values.yaml").toFile());
        assertEquals(Set.of("inferencePool", "provider"), fieldNames(values));
        JsonNode pool = values.get("inferencePool");
        assertEquals(Set.of("modelServers", "targetPorts", "modelServerType"), fieldNames(pool));
        Deployment deployment = KubernetesManifests.one(Deployment.class);
        Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
        pool.get("modelServers").get("matchLabels").fields().forEachRemaining(label ->
                assertEquals(label.getValue().asText(), podLabels.get(label.getKey()), label.getKey()));
        Container container = onlyContainer(deployment.getSpec().getTemplate().getSpec());
        assertEquals(1, pool.get("targetPorts").size());
        assertEquals(port(container, "http").getContainerPort().intValue(),
                pool.get("targetPorts").get(0).get("number").asInt());
        assertEquals("vllm", pool.get("modelServerType").asText());
        assertEquals("true", env(container, "LANEWAY_METRICS_ENDPOINT").getValue());
        assertEquals("true", env(container, "LANEWAY_METRICS_OPEN").getValue());
    }

    @Test
    void aMisspeltFieldOfTheRouteFailsTheReading() {
        String yaml = """
                apiVersion: gateway.networking.k8s.io/v1
                kind: HTTPRoute
                metadata: {name: x}
                spec:
                  rules:
                    - backendRef: {group: inference.networking.k8s.io, kind: InferencePool, name: laneway}
                """;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KubernetesManifests.read("route.yaml", yaml));
        assertTrue(e.getMessage().contains("\"backendRef\""), e.getMessage());
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new java.util.TreeSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static Container onlyContainer(PodSpec pod) {
        assertEquals(1, pod.getContainers().size());
        return pod.getContainers().get(0);
    }

    private static ContainerPort port(Container container, String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("the container has no port named " + name));
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("the container sets no " + name));
    }

    private static String dockerfileValue(String dockerfile, String regex) {
        Matcher m = Pattern.compile(regex).matcher(dockerfile);
        if (!m.find()) {
            throw new AssertionError(DOCKERFILE + " has nothing matching " + regex);
        }
        return m.group(1);
    }
}
