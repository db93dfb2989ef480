package dev.laneway.runtime.api;

import dev.laneway.runtime.api.GenerationService.Answer;
import dev.laneway.spi.Laya;
import dev.laneway.spi.RouteDecision;
import io.smallrye.mutiny.Multi;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Puts answers on the wire, and checks what comes in. */
final class HttpAnswers {
    private HttpAnswers() {
    }

    /**
     * A JSON response or an event stream, through one return type so that the request body decides which. The
     * resource methods declare no {@code @Produces}: the Content-Type is set here. A routed request's response, of
     * either kind and whatever its status, carries the router's decision in {@code X-Laneway-Route}.
     */
    static RestMulti<byte[]> toHttp(Answer answer) {
        if (answer instanceof Answer.Stream stream) {
            RestMulti.SyncRestMulti.Builder<byte[]> builder = RestMulti.fromMultiData(stream.frames())
                    .status(200)
                    .header("Content-Type", stream.contentType())
                    .header("Cache-Control", "no-cache")
                    .header("X-Accel-Buffering", "no");
            answer.route().ifPresent(r -> builder.header(Laya.HEADER, r.describe()));
            return builder.build();
        }
        return RestMulti.fromUniResponse(((Answer.Whole) answer).reply(),
                reply -> Multi.createFrom().item(reply.body()),
                reply -> headers(reply, answer.route()),
                HttpReply::status);
    }

    private static Map<String, List<String>> headers(HttpReply reply, Optional<RouteDecision> route) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        reply.headers().forEach((name, value) -> headers.put(name, List.of(value)));
        route.ifPresent(r -> headers.put(Laya.HEADER, List.of(r.describe())));
        return headers;
    }

    /** A body is read as JSON when it says so or says nothing; any other declared type is a 415. */
    static void requireJson(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return;
        }
        MediaType type;
        try {
            type = MediaType.valueOf(contentType);
        } catch (IllegalArgumentException e) {
            throw unsupported(contentType);
        }
        boolean json = type.getType().equalsIgnoreCase("application")
                && (type.getSubtype().equalsIgnoreCase("json") || type.getSubtype().toLowerCase().endsWith("+json"));
        if (!json) {
            throw unsupported(contentType);
        }
    }

    private static ApiException unsupported(String contentType) {
        return ApiException.http(415, "unsupported_media_type", "the request body must be application/json, was "
                + contentType);
    }
}
