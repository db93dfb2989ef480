package dev.laneway.spi;

import java.util.Objects;

/**
 * One generation.
 *
 * @param prompt       the prompt token ids, special tokens included
 * @param maxTokens    the most tokens to generate
 * @param sampling     how tokens are chosen
 * @param topLogprobs  how many alternatives to report with each token's log-probability; 0 reports none
 * @param ignoreEos    keep generating past the end-of-text token (benchmarks)
 */
public record GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos) {
    public GenerationRequest {
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(sampling, "sampling");
        if (prompt.length == 0) {
            throw new IllegalArgumentException("prompt must hold at least one token");
        }
        if (maxTokens < 0 || topLogprobs < 0) {
            throw new IllegalArgumentException("maxTokens and topLogprobs must not be negative");
        }
        prompt = prompt.clone();
    }

    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling) {
        this(prompt, maxTokens, sampling, 0, false);
    }

    @Override
    public int[] prompt() {
        return prompt.clone();
    }

    /** The prompt length without copying it. */
    public int promptLength() {
        return prompt.length;
    }
}
