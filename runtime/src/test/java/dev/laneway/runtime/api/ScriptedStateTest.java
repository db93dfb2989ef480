package dev.laneway.runtime.api;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;

import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static dev.laneway.runtime.api.ScriptedServerTest.post;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The scripted server on a fresh start, for what reads the whole server's state: Ollama's client closing the model
 * ({@code keep_alive: 0}) and the gateway's gauges of the queue and the KV cache. No other test's generation runs
 * meanwhile.
 */
@QuarkusTest
@TestProfile(ScriptedProfile.Fresh.class)
class ScriptedStateTest {

    @TestHTTPResource("/")
    URL server;

    /**
     * Ollama's official JavaScript client on {@code /api}: a chat whole and streamed with the same text, a JSON schema
     * as the format (refused by name: this model cannot follow one), a tool round trip whole and streamed with the arguments as objects, a generation, the lists, and
     * {@code keep_alive: 0} closing the model until the next request opens it again; refusals read as Ollama's errors.
     */
    @Test
    void theOllamaClientChatsGeneratesCallsAToolAndUnloadsTheModel() throws Exception {
        String calling = "say:<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>";
        String host = server.toString().replaceAll("/$", "");
        NodeSdk.Run run = NodeSdk.ollama(host, "say:Hello there.", calling, "say:It is 18 degrees in Paris.",
                "say:{\"city\":\"Lyon\"}", ScriptedModel.ID);
        assertEquals(0, run.exitCode(), run.output());
        JsonPath seen = new JsonPath(run.output().lines().reduce((a, b) -> b).orElseThrow());
        assertEquals("Hello there.", seen.getString("whole"));
        assertEquals("Hello there.", seen.getString("streamed"));
        // the scripted model cannot constrain its output; the stories model's test sees a schema followed
        assertTrue(seen.getString("formatError").contains("grammar or schema"), seen.getString("formatError"));
        for (String way : List.of("wholeTool", "streamedTool")) {
            assertEquals("Paris", seen.getString(way + ".city"));
            assertEquals("It is 18 degrees in Paris.", seen.getString(way + ".answer"));
        }
        assertEquals("Hello there.", seen.getString("generated"));
        assertEquals("Hello there.", seen.getString("generatedStream"));
        assertEquals(List.of(ScriptedModel.ID), seen.getList("tags"));
        assertEquals(List.of(ScriptedModel.ID), seen.getList("psBefore"));
        assertEquals(List.of(), seen.getList("psAfterUnload"));
        assertEquals("Hello there.", seen.getString("again"));
        assertEquals(List.of(ScriptedModel.ID), seen.getList("psAfterAgain"));
        assertTrue(seen.getString("error").contains("options.num_gpu"), seen.getString("error"));
        assertEquals(501, seen.getInt("pullStatus"));
        assertTrue(seen.getString("pullError").contains("pull is not supported"), seen.getString("pullError"));
    }

    /**
     * The gauges a Kubernetes inference gateway's endpoint picker reads, parsed from {@code /metrics} as it parses
     * Prometheus text: with the stream busy and a request waiting, {@code vllm:num_requests_running} and
     * {@code _waiting} say so, {@code vllm:kv_cache_usage_perc} rises as the running generation grows and falls back to
     * 0 when it ends; the cache's shape and the (absent) LoRA adapters are info gauges with exact labels. The same
     * gauges are under {@code /q/metrics}.
     */
    @Test
    void theGatewaysGaugesFollowTheQueueAndTheKvCache() throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(2);
        try {
            Future<Integer> running = clients.submit(() -> post("/v1/completions",
                    "{\"prompt\":\"forever:\",\"max_tokens\":4000}").statusCode());
            awaitGauge("vllm:num_requests_running", 1);
            // The scripted model runs every submitted generation at once, so the queued one must not end while the
            // gauges are read: it waits for the hold to open.
            ScriptedModel.hold = new java.util.concurrent.CountDownLatch(1);
            Future<Integer> waiting = clients.submit(() -> post("/v1/completions",
                    "{\"prompt\":\"hold:\",\"max_tokens\":2}").statusCode());
            awaitGauge("vllm:num_requests_waiting", 1);
            Map<String, Sample> first = prometheus(given().get("/metrics").then().statusCode(200)
                    .contentType(org.hamcrest.Matchers.startsWith("text/plain")).extract().asString());
            assertEquals(1, first.get("vllm:num_requests_running").value());
            assertEquals(1, first.get("vllm:num_requests_waiting").value());
            double kv = first.get("vllm:kv_cache_usage_perc").value();
            assertTrue(kv > 0 && kv < 1, "a running generation holds part of the cache: " + kv);
            Thread.sleep(200);
            double later = prometheus(given().get("/metrics").asString()).get("vllm:kv_cache_usage_perc").value();
            assertTrue(later > kv, "the cache in use grows with the generation: " + kv + " then " + later);
            Sample config = first.get("vllm:cache_config_info");
            assertEquals(Map.of("block_size", "16", "num_gpu_blocks", Integer.toString(ScriptedModel.CONTEXT / 16)),
                    config.labels());
            assertEquals(1, config.value());
            assertEquals(Map.of("max_lora", "0", "running_lora_adapters", "", "waiting_lora_adapters", ""),
                    first.get("vllm:lora_requests_info").labels());
            ScriptedModel.hold.countDown();
            assertEquals(200, running.get(30, TimeUnit.SECONDS));
            assertEquals(200, waiting.get(30, TimeUnit.SECONDS));
        } finally {
            ScriptedModel.hold.countDown();
            clients.shutdownNow();
        }
        awaitGauge("vllm:kv_cache_usage_perc", 0);
        Map<String, Sample> idle = prometheus(given().get("/metrics").asString());
        assertEquals(0, idle.get("vllm:num_requests_running").value());
        assertEquals(0, idle.get("vllm:num_requests_waiting").value());
        Map<String, Sample> quarkus = prometheus(given().get("/q/metrics").asString());
        for (String name : List.of("vllm:num_requests_waiting", "vllm:num_requests_running",
                "vllm:kv_cache_usage_perc", "laneway_kv_cache_usage")) {
            assertEquals(0, quarkus.get(name).value(), name);
        }
    }

    /** One sample of Prometheus text: its labels and value. */
    record Sample(Map<String, String> labels, double value) {
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    /** Prometheus text format: each sample line by metric name (the first with that name); comments skipped. */
    static Map<String, Sample> prometheus(String text) {
        Map<String, Sample> samples = new java.util.LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), "not a Prometheus sample: " + line);
            Map<String, String> labels = new java.util.LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                int end = 0;
                while (l.find() && l.start() == end) {
                    labels.put(l.group(1), l.group(2));
                    end = l.end();
                }
                assertEquals(m.group(2).length(), end, "labels of " + line);
            }
            samples.putIfAbsent(m.group(1), new Sample(labels, Double.parseDouble(m.group(3))));
        }
        return samples;
    }

    private static void awaitGauge(String name, double value) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            Sample s = prometheus(given().get("/metrics").asString()).get(name);
            if (s != null && s.value() == value) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError(name + " never reached " + value);
    }

}
