package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.serve.LanewayConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * The chat page at {@code /}: {@code index.html} and the files under {@code /webui/}, static resources that the HTTP
 * server serves (docs/web.md). Fetching them needs no API key, so that the page can load and ask for one; everything
 * it calls does. With {@code laneway.webui} false ({@code --no-webui}) they answer 404, as an unknown path does.
 */
@ApplicationScoped
public class WebPage {

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    /** Whether a request asks for the page or one of its files. */
    static boolean isPageRequest(RoutingContext ctx) {
        HttpMethod method = ctx.request().method();
        if (method != HttpMethod.GET && method != HttpMethod.HEAD) {
            return false;
        }
        String path = ctx.normalizedPath();
        return path.equals("/") || path.equals("/index.html") || path.startsWith("/webui/");
    }

    void install(@Observes Router router) {
        if (!config.webui()) {
            // after the Host check, CORS and the API key
            router.route().order(Integer.MIN_VALUE + 3).handler(this::hide);
        }
    }

    private void hide(RoutingContext ctx) {
        if (!isPageRequest(ctx)) {
            ctx.next();
            return;
        }
        HttpReply reply = HttpReply.error(ApiException.http(404, "not_found", "not found"), ctx.normalizedPath(),
                mapper);
        reply.headers().forEach(ctx.response()::putHeader);
        ctx.response().setStatusCode(reply.status()).end(Buffer.buffer(reply.body()));
    }
}
