package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.serve.LanewayConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Optional;

/**
 * With {@code laneway.api-key} (or {@code laneway.api-key-file}) set, every request but the health checks, the
 * web page's files ({@link WebPage}) and, with {@code laneway.metrics-open}, the metrics must carry {@code Authorization: Bearer KEY}. It runs before any other handler,
 * so metrics and unknown paths are covered too. Keys are compared through their SHA-256 digests in constant time, so
 * neither the content nor the length of the key leaks through timing.
 */
@ApplicationScoped
public class ApiKeyFilter {
    private static final String BEARER = "Bearer ";

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    void install(@Observes Router router) {
        Optional<String> key = config.apiKey().filter(k -> !k.isBlank());
        if (config.apiKeyFile().isPresent()) {
            if (key.isPresent()) {
                throw new IllegalStateException("give laneway.api-key or laneway.api-key-file, not both");
            }
            key = Optional.of(readKey(Path.of(config.apiKeyFile().get())));
        }
        key.ifPresent(k -> {
            byte[] expected = sha256(k);
            router.route().order(Integer.MIN_VALUE + 2).handler(ctx -> check(ctx, expected));
        });
    }

    /**
     * The key in a key file: its first line, without surrounding white space.
     *
     * @throws IllegalStateException naming the file when it cannot be read or holds no key (never the key itself)
     */
    public static String readKey(Path file) {
        String first;
        try (java.io.BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            first = in.readLine();
        } catch (IOException e) {
            throw new IllegalStateException("the API key file " + file + " cannot be read: " + e.getMessage());
        }
        if (first == null || first.isBlank()) {
            throw new IllegalStateException("the API key file " + file + " holds no key on its first line");
        }
        return first.strip();
    }

    private void check(RoutingContext ctx, byte[] expected) {
        String path = ctx.normalizedPath();
        if (path.equals("/health") || path.equals("/v1/health") || path.equals("/q/health") || path.startsWith("/q/health/")) {
            ctx.next();
            return;
        }
        if (config.metricsOpen() && (path.equals("/metrics") || path.equals("/q/metrics"))) {
            ctx.next();
            return;
        }
        // The page loads without the key, then asks for it; what it calls needs the key.
        if (config.webui() && WebPage.isPageRequest(ctx)) {
            ctx.next();
            return;
        }
        // Anthropic's clients send the key as x-api-key.
        String header = ctx.request().getHeader("Authorization");
        String key = ctx.request().getHeader("x-api-key");
        if (key == null && (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length()))) {
            refuse(ctx, "this server needs an API key: send 'Authorization: Bearer <key>' (or 'x-api-key: <key>')");
            return;
        }
        byte[] given = sha256(key != null ? key.trim() : header.substring(BEARER.length()).trim());
        if (!MessageDigest.isEqual(given, expected)) {
            refuse(ctx, "the API key is not valid");
            return;
        }
        ctx.next();
    }

    private void refuse(RoutingContext ctx, String message) {
        HttpReply reply = HttpReply.error(ApiException.unauthorized(message), ctx.normalizedPath(), mapper);
        reply.headers().forEach(ctx.response()::putHeader);
        ctx.response().putHeader("WWW-Authenticate", "Bearer").setStatusCode(reply.status())
                .end(Buffer.buffer(reply.body()));
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JRE", e);
        }
    }
}
