package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A whole HTTP answer: status, headers and body.
 *
 * @param headers header name to value, Content-Type included
 */
record HttpReply(int status, Map<String, String> headers, byte[] body) {
    static final String JSON = "application/json; charset=utf-8";
    static final String EVENT_STREAM = "text/event-stream; charset=utf-8";
    /** Newline-delimited JSON, as Ollama streams. */
    static final String NDJSON = "application/x-ndjson";

    HttpReply {
        headers = Map.copyOf(headers);
    }

    static HttpReply json(int status, Object value, ObjectMapper mapper) {
        return new HttpReply(status, Map.of("Content-Type", JSON), write(value, mapper));
    }

    /**
     * The error body in the shape of the API at {@code path}, with {@code Retry-After} when the client should try
     * again later.
     */
    static HttpReply error(ApiException error, String path, ObjectMapper mapper) {
        return error(error, error.bodyFor(path), mapper);
    }

    static HttpReply error(ApiException error, Object body, ObjectMapper mapper) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", JSON);
        error.retryAfterSeconds().ifPresent(s -> headers.put("Retry-After", Integer.toString(s)));
        return new HttpReply(error.status(), headers, write(body, mapper));
    }

    static byte[] write(Object value, ObjectMapper mapper) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
