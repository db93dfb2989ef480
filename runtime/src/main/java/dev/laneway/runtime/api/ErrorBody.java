package dev.laneway.runtime.api;

/** OpenAI's error body: {@code {"error":{"message","type","param","code"}}}; param and code may be null. */
public record ErrorBody(Error error) {

    /** The error itself. */
    public record Error(String message, String type, String param, String code) {
    }
}
