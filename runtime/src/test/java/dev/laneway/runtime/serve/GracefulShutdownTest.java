package dev.laneway.runtime.serve;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged server, as a process, told to stop (SIGTERM) while four clients' generations run on its two streams,
 * streamed and not: readiness goes down and a new request gets 503 with {@code Retry-After} at once, the running ones
 * finish within the grace period (or, past it, are ended with a 503 their clients read), and the process exits 0.
 * Runs after the package phase, against {@code target/quarkus-app}.
 */
class GracefulShutdownTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void admittedRequestsFinishWithinTheGracePeriod() throws Exception {
        List<HttpResponse<String>> answers = stopWhileGenerating(30, 2);
        for (HttpResponse<String> answer : answers) {
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(answer.body().contains("\"finish_reason\":\"length\""), answer.body());
            assertTrue(!answer.body().contains("\"error\""), answer.body());
        }
    }

    @Test
    void requestsStillRunningAfterTheGracePeriodAreEndedWithAnError() throws Exception {
        List<HttpResponse<String>> answers = stopWhileGenerating(1, 16);
        for (HttpResponse<String> answer : answers) {
            // a streamed answer has begun (200) and ends with an error event; the others are a 503
            assertTrue(answer.body().contains("\"code\":\"shutting_down\""), answer.body());
            assertTrue(answer.statusCode() == 503 || answer.statusCode() == 200, answer.statusCode() + "");
        }
    }

    /**
     * Starts the server with {@code graceSeconds}, sends four requests of {@code choices} choices of 1,900 tokens each
     * (two streamed), stops the server once they run, checks what the server answers while it drains and that it
     * exits 0, and returns the four answers.
     */
    private List<HttpResponse<String>> stopWhileGenerating(int graceSeconds, int choices) throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path log = Files.createTempFile("laneway-shutdown", ".log");
        Process server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlaneway.shutdown.grace-seconds=" + graceSeconds,
                "-Dlaneway.cache.dir=" + System.getProperty("laneway.cache.dir", "target/laneway-cache"), "-jar",
                Path.of("target", "quarkus-app", "quarkus-run.jar").toString(), "serve", "-m", model().toString(),
                "--port", Integer.toString(port), "--streams", "2")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            String base = "http://127.0.0.1:" + port;
            awaitStatus(base + "/q/health/ready", 200, Duration.ofSeconds(60), log);
            List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                running.add(http.sendAsync(post(base, "{\"prompt\":\"Once upon a time\",\"max_tokens\":1900,"
                        + "\"ignore_eos\":true,\"n\":" + choices + ",\"stream\":" + (c % 2 == 0) + "}"),
                        HttpResponse.BodyHandlers.ofString()));
            }
            awaitMetric(base, "laneway_streams_busy", 2, log);
            server.destroy();  // SIGTERM
            awaitStatus(base + "/q/health/ready", 503, Duration.ofSeconds(2), log);
            HttpResponse<String> refused = http.send(post(base, "{\"prompt\":\"Once\",\"max_tokens\":4}"),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(503, refused.statusCode(), refused.body());
            assertEquals("5", refused.headers().firstValue("Retry-After").orElse(""));
            assertEquals("shutting_down", JSON.readTree(refused.body()).at("/error/code").asText());
            assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base + "/q/health/live")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "alive while draining");
            List<HttpResponse<String>> answers = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> answer : running) {
                answers.add(answer.get(graceSeconds + 20L, TimeUnit.SECONDS));
            }
            assertTrue(server.waitFor(graceSeconds + 20L, TimeUnit.SECONDS), "the server did not exit");
            assertEquals(0, server.exitValue(), Files.readString(log));
            return answers;
        } finally {
            server.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }

    private static HttpRequest post(String base, String json) {
        return HttpRequest.newBuilder(URI.create(base + "/v1/completions")).timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build();
    }

    private void awaitStatus(String url, int status, Duration bound, Path log) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        int last = -1;
        while (System.nanoTime() < deadline) {
            try {
                last = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode();
                if (last == status) {
                    return;
                }
            } catch (IOException notYet) {
                last = -1;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(url + " answered " + last + ", not " + status + ", within " + bound + "\n"
                + Files.readString(log));
    }

    private void awaitMetric(String base, String name, double value, Path log) throws Exception {
        for (int i = 0; i < 500; i++) {
            String text = http.send(HttpRequest.newBuilder(URI.create(base + "/q/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            for (String line : text.split("\n")) {
                if (line.startsWith(name + " ") && Double.parseDouble(line.substring(name.length() + 1)) >= value) {
                    return;
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError(name + " never reached " + value + "\n" + Files.readString(log));
    }

    static Path model() {
        return dev.laneway.runtime.api.StoriesProfile.model();
    }
}
