package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.LanewayConfig;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * Cross-origin requests from web pages, off unless allowed: with no {@code laneway.cors.origins} (the default) the
 * server adds no CORS header, so a browser lets no other site's page read its answers. With an allow-list
 * ({@code --cors-origins}: origins such as {@code https://chat.example}, {@code localhost} for any loopback origin, or
 * {@code *} for any), a request whose {@code Origin} is on it gets the headers that let its page read the answer, and
 * a preflight ({@code OPTIONS} with {@code Access-Control-Request-Method}) is answered 200 before the API key is asked
 * for (a browser sends none with it); an origin not on the list gets no CORS header.
 */
@ApplicationScoped
public class CorsFilter {
    static final String METHODS = "GET, POST, DELETE, OPTIONS";

    @Inject
    LanewayConfig config;

    void install(@Observes Router router) {
        List<String> origins = config.cors().origins().orElse(List.of()).stream().map(String::strip)
                .filter(o -> !o.isEmpty()).toList();
        if (!origins.isEmpty()) {
            // after the Host check, before the API key
            router.route().order(Integer.MIN_VALUE + 1).handler(ctx -> handle(ctx, origins));
        }
    }

    private static void handle(RoutingContext ctx, List<String> allowed) {
        String origin = ctx.request().getHeader("Origin");
        boolean preflight = ctx.request().method() == HttpMethod.OPTIONS
                && ctx.request().getHeader("Access-Control-Request-Method") != null;
        if (origin != null && allows(allowed, origin)) {
            ctx.response().putHeader("Access-Control-Allow-Origin", origin)
                    .putHeader("Access-Control-Allow-Credentials", "true")
                    .putHeader("Vary", "Origin");
            if (preflight) {
                ctx.response().putHeader("Access-Control-Allow-Methods", METHODS)
                        .putHeader("Access-Control-Allow-Headers", "*")
                        .putHeader("Access-Control-Max-Age", "600");
            }
        }
        if (preflight) {
            ctx.response().setStatusCode(200).end();
            return;
        }
        ctx.next();
    }

    /** Whether an {@code Origin} is on the list: exactly, any with {@code *}, or any loopback one with localhost. */
    static boolean allows(List<String> allowed, String origin) {
        for (String a : allowed) {
            if (a.equals("*") || a.equalsIgnoreCase(origin)
                    || a.equalsIgnoreCase("localhost") && loopbackOrigin(origin)) {
                return true;
            }
        }
        return false;
    }

    private static boolean loopbackOrigin(String origin) {
        try {
            URI uri = URI.create(origin);
            String scheme = String.valueOf(uri.getScheme()).toLowerCase(Locale.ROOT);
            return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null
                    && LoopbackHostFilter.isLoopback(uri.getHost());
        } catch (IllegalArgumentException notAnOrigin) {
            return false;
        }
    }
}
