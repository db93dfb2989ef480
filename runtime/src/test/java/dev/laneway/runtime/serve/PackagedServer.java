package dev.laneway.runtime.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

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
import java.util.concurrent.TimeUnit;

/**
 * The packaged server ({@code target/quarkus-app}) as a process on a free port, as {@code laneway serve} runs it,
 * serving a model (by default the shared stories260K) with the options a test gives.
 */
public final class PackagedServer implements AutoCloseable {
    public static final String MODEL_ID = "stories260K";
    private static final ObjectMapper JSON = new ObjectMapper();

    public final String base;
    private final Process process;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private PackagedServer(String base, Process process, Path log) {
        this.base = base;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts a server of stories260K, as {@value #MODEL_ID}, with these JVM properties ({@code -Dkey=value}) and serve
     * options, and waits until it is ready.
     */
    public static PackagedServer start(List<String> properties, String... options) throws Exception {
        List<String> all = new ArrayList<>(List.of("--alias", MODEL_ID));
        all.addAll(List.of(options));
        return start(dev.laneway.runtime.api.StoriesProfile.model(), properties, all.toArray(String[]::new));
    }

    /** Starts a server of {@code model} with these JVM properties and serve options, and waits until it is ready. */
    public static PackagedServer start(Path model, List<String> properties, String... options) throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Dlaneway.cache.dir=" + System.getProperty("laneway.cache.dir", "target/laneway-cache")));
        command.addAll(properties);
        command.addAll(List.of("-jar", Path.of("target", "quarkus-app", "quarkus-run.jar").toString(), "serve",
                "-m", model.toString(), "--port", Integer.toString(port)));
        command.addAll(List.of(options));
        Path log = Files.createTempFile("laneway-serve", ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        PackagedServer server = new PackagedServer("http://127.0.0.1:" + port, process, log);
        try {
            server.awaitReady();
        } catch (Exception | AssertionError e) {
            server.close();
            throw e;
        }
        return server;
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("the server exited " + process.exitValue() + ":\n" + log());
            }
            try {
                if (get("/health").statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // the port is not open yet
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the server did not become ready:\n" + log());
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    public HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> post(String path, String json, String... headers) throws IOException,
            InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The whole (unstreamed) chat answer to a request body. */
    public JsonNode chat(String json, String... headers) throws IOException, InterruptedException {
        HttpResponse<String> answer = post("/v1/chat/completions", json, headers);
        if (answer.statusCode() != 200) {
            throw new AssertionError(answer.statusCode() + " " + answer.body());
        }
        return JSON.readTree(answer.body());
    }

    /** The sum of a metric's series in {@code /q/metrics} whose labels hold {@code labelPart} (may be empty). */
    public double metric(String name, String labelPart, String... headers) throws IOException,
            InterruptedException {
        double sum = 0;
        for (String line : get("/q/metrics", headers).body().split("\n")) {
            if ((line.startsWith(name + " ") || line.startsWith(name + "{")) && line.contains(labelPart)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        Files.deleteIfExists(log);
    }
}
