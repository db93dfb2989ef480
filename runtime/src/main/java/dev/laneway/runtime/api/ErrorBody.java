package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * OpenAI's error body: {@code {"error":{"message","type","param","code"}}}; param and code may be null. A prompt that
 * does not fit also says its tokens and the context's, as llama-server does ({@code n_prompt_tokens}, {@code n_ctx}).
 */
public record ErrorBody(Error error) {

    /** The error itself. */
    public record Error(String message, String type, String param, String code,
                        @JsonProperty("n_prompt_tokens") @JsonInclude(JsonInclude.Include.NON_NULL) Integer promptTokens,
                        @JsonProperty("n_ctx") @JsonInclude(JsonInclude.Include.NON_NULL) Integer contextSize) {
    }
}
