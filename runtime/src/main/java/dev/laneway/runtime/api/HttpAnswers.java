package dev.laneway.runtime.api;

import dev.laneway.runtime.api.GenerationService.Answer;
import io.smallrye.mutiny.Multi;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Puts answers on the wire, and checks what comes in. */
final class HttpAnswers {
    private HttpAnswers() {
    }

    /**
     * A JSON response or an event stream, through one return type so that the request body decides which. The
     * resource methods declare no {@code @Produces}: the Content-Type is set here.
     */
    static RestMulti<byte[]> toHttp(Answer answer) {
        if (answer instanceof Answer.Stream stream) {
            return RestMulti.fromMultiData(stream.frames())
                    .status(200)
                    .header("Content-Type", HttpReply.EVENT_STREAM)
                    .header("Cache-Control", "no-cache")
                    .header("X-Accel-Buffering", "no")
                    .build();
        }
        return RestMulti.fromUniResponse(((Answer.Whole) answer).reply(),
                reply -> Multi.createFrom().item(reply.body()),
                reply -> reply.headers().entrySet().stream()
                        .collect(Collectors.toMap(Map.Entry::getKey, e -> List.of(e.getValue()))),
                HttpReply::status);
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
