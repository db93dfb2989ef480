package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * llama-server's {@code prompt_progress}: {@code processed} of the prompt's {@code total} tokens are computed, the
 * first {@code cache} of them taken from the KV cache, {@code time_ms} after the work on the prompt began.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
record PromptProgress(int total, int cache, int processed, long timeMs) {
}
