package dev.laneway.runtime.api;

import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;

/**
 * One choice to generate.
 *
 * @param index     its index in the response
 * @param prompt    the prompt token ids
 * @param maxTokens the most tokens, already clamped to the context left unless the context shifts
 * @param shiftKeep the positions a context shift keeps, or none ({@link GenerationRequest#NO_SHIFT})
 */
record ChoicePlan(int index, int[] prompt, int maxTokens, Sampling sampling, int shiftKeep) {

    /** A choice that ends where the context does. */
    ChoicePlan(int index, int[] prompt, int maxTokens, Sampling sampling) {
        this(index, prompt, maxTokens, sampling, GenerationRequest.NO_SHIFT);
    }
}
