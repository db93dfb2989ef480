package dev.laneway.runtime.serve;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.http.HttpServer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

/**
 * The server's part in making the class archive the launcher starts with (runtime/pom.xml): with
 * {@code laneway.class-archive-run=true}, once the model is ready the server sends itself the requests clients send
 * first (a chat completion, a streamed completion, the model list) and exits, 0 if every one was answered 200, so
 * that the JVM writes every class a server loads up to its first answers.
 */
@ApplicationScoped
public class ClassArchiveRun {
    private static final Logger LOG = Logger.getLogger(ClassArchiveRun.class);
    private static final Duration LOAD_LIMIT = Duration.ofMinutes(5);

    @Inject
    LanewayConfig config;

    @Inject
    ModelService models;

    @Inject
    HttpServer server;

    private final HttpClient client = HttpClient.newHttpClient();

    void onStart(@Observes StartupEvent event) {
        if (!config.classArchiveRun()) {
            return;
        }
        Thread t = new Thread(this::run, "laneway-class-archive-run");
        t.setDaemon(true);
        t.start();
    }

    private void run() {
        int code = 1;
        try {
            Instant deadline = Instant.now().plus(LOAD_LIMIT);
            while (models.state() == ModelService.State.LOADING && Instant.now().isBefore(deadline)) {
                Thread.sleep(20);
            }
            if (models.state() != ModelService.State.READY) {
                return;  // a model that failed to load stops the server itself
            }
            boolean ok = post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],"
                    + "\"max_tokens\":4}")
                    & post("/v1/completions", "{\"prompt\":\"Once\",\"max_tokens\":4,\"stream\":true}")
                    & get("/v1/models");
            code = ok ? 0 : 1;
        } catch (IOException e) {
            LOG.errorf("class archive run: %s", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            Quarkus.asyncExit(code);
        }
    }

    private boolean post(String path, String json) throws IOException, InterruptedException {
        return send(request(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    private boolean get(String path) throws IOException, InterruptedException {
        return send(request(path).GET().build());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getPort() + path))
                .timeout(Duration.ofMinutes(1));
    }

    private boolean send(HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            LOG.errorf("class archive run: %s answered %d: %s", request.uri().getPath(), r.statusCode(), r.body());
        }
        return r.statusCode() == 200;
    }
}
