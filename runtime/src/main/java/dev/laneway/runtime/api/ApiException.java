package dev.laneway.runtime.api;

import java.util.OptionalInt;

/**
 * A request the API answers with an OpenAI-style error body instead of a result. The message is for the client: it
 * names what was wrong and never carries a stack trace or a server path.
 */
public final class ApiException extends RuntimeException {
    private final int status;
    private final String type;
    private final String code;
    private final String param;
    private final OptionalInt retryAfterSeconds;
    /** For a prompt that does not fit: its tokens and the context's, as llama-server reports them; else null. */
    private final Integer promptTokens;
    private final Integer contextSize;

    private ApiException(int status, String type, String code, String param, String message, OptionalInt retryAfter) {
        this(status, type, code, param, message, retryAfter, null, null);
    }

    private ApiException(int status, String type, String code, String param, String message, OptionalInt retryAfter,
                         Integer promptTokens, Integer contextSize) {
        super(PublicText.of(message), null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
        this.retryAfterSeconds = retryAfter;
        this.promptTokens = promptTokens;
        this.contextSize = contextSize;
    }

    /** 400: a field has a value the API cannot use. */
    public static ApiException invalidValue(String param, String message) {
        return new ApiException(400, "invalid_request_error", "invalid_value", param, message, OptionalInt.empty());
    }

    /** 400: a field has the wrong JSON type. */
    public static ApiException invalidType(String param, String message) {
        return new ApiException(400, "invalid_request_error", "invalid_type", param, message, OptionalInt.empty());
    }

    /** 400: the body is not a JSON object. */
    public static ApiException invalidJson(String message) {
        return new ApiException(400, "invalid_request_error", "invalid_json", null, message, OptionalInt.empty());
    }

    /**
     * 400: a prompt of {@code tokens} leaves no room in a context of {@code context} for even one generated token;
     * {@code message} says so in the words of the endpoint.
     */
    public static ApiException contextExceeded(String param, String message, int tokens, int context) {
        return new ApiException(400, "invalid_request_error", "context_length_exceeded", param, message,
                OptionalInt.empty(), tokens, context);
    }

    /** 404: the request names a model this server does not serve. */
    public static ApiException modelNotFound(String requested, java.util.List<String> served) {
        return new ApiException(404, "invalid_request_error", "model_not_found", "model",
                "the model '" + requested + "' does not exist; this server serves '" + String.join("', '", served)
                        + "'",
                OptionalInt.empty());
    }

    /** 401: the API key is missing or wrong. */
    public static ApiException unauthorized(String message) {
        return new ApiException(401, "authentication_error", "invalid_api_key", null, message, OptionalInt.empty());
    }

    /** 503: the model is still loading (or failed to load). */
    public static ApiException notReady(String message) {
        return new ApiException(503, "unavailable_error", "model_not_ready", null, message, OptionalInt.of(1));
    }

    /** 503: the server is stopping; another replica (or this one, restarted) can take the request. */
    public static ApiException shuttingDown(String message) {
        return new ApiException(503, "unavailable_error", "shutting_down", null, message, OptionalInt.of(5));
    }

    /** 503: every stream is busy and the queue is full. */
    public static ApiException overloaded(String message) {
        return new ApiException(503, "overloaded_error", "queue_full", null, message, OptionalInt.of(1));
    }

    /**
     * 503: the device failed {@code what} (the next starts afresh), or is out of service and refused it without
     * running it, with {@code Retry-After} until its next probe.
     */
    public static ApiException deviceFault(dev.laneway.spi.DeviceFaultException e, String what) {
        if (e.retryAfter().isPresent()) {
            return new ApiException(503, "device_error", "device_unavailable", null, e.getMessage(),
                    OptionalInt.of((int) Math.max(1, Math.min(3600, e.retryAfter().get().toSeconds()))));
        }
        return new ApiException(503, "device_error", "device_fault", null, "the device " + e.device() + " failed "
                + what + ": " + e.getMessage(), OptionalInt.empty());
    }

    /** 502: the Laya router could not decide where the request runs (its scorer failed); the next request may. */
    public static ApiException routerFailed(String message) {
        return new ApiException(502, "router_error", "router_failed", null, message, OptionalInt.empty());
    }

    /** 500: a fault of the server; the details stay in its log. */
    public static ApiException internal() {
        return new ApiException(500, "server_error", "internal_error", null,
                "the server failed to answer this request; its log has the details", OptionalInt.empty());
    }

    /** Any other HTTP-level refusal (404 path, 405 method, 406, 413, 415 media type), with HTTP's own wording. */
    public static ApiException http(int status, String code, String message) {
        return new ApiException(status, "invalid_request_error", code, null, message, OptionalInt.empty());
    }

    public int status() {
        return status;
    }

    public OptionalInt retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /**
     * The wire form for a request to {@code path}: Anthropic's {@code {"type":"error","error":{"type","message"}}}
     * under {@code /v1/messages}, Ollama's {@code {"error": message}} under {@code /api/}, OpenAI's elsewhere; on
     * llama-server's own paths (those without {@code /v1/}) a prompt that does not fit has llama-server's type,
     * {@code exceed_context_size_error}.
     */
    public Object bodyFor(String path) {
        if (path != null && path.startsWith(AnthropicFormat.PATH)) {
            return anthropicBody();
        }
        if (path != null && path.startsWith("/api/")) {
            return java.util.Map.of("error", getMessage());
        }
        if (path != null && !path.startsWith("/v1/") && promptTokens != null) {
            return new ErrorBody(new ErrorBody.Error(getMessage(), "exceed_context_size_error", param, code,
                    promptTokens, contextSize));
        }
        return body();
    }

    /** Anthropic's error object, its type from the status as Anthropic's API names them. */
    public AnthropicFormat.ErrorBody anthropicBody() {
        String anthropicType = switch (status) {
            case 400, 415, 422 -> "invalid_request_error";
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case 503 -> "overloaded_error";
            default -> "api_error";
        };
        return new AnthropicFormat.ErrorBody("error", new AnthropicFormat.ErrorBody.Error(anthropicType,
                getMessage()));
    }

    /** The wire form, {@code {"error":{...}}}. */
    public ErrorBody body() {
        return new ErrorBody(new ErrorBody.Error(getMessage(), type, param, code, promptTokens, contextSize));
    }
}
