package dev.laneway.runtime.api;

import dev.laneway.spi.Sampling;

/**
 * One choice to generate.
 *
 * @param index     its index in the response
 * @param prompt    the prompt token ids
 * @param maxTokens the most tokens, already clamped to the context left
 */
record ChoicePlan(int index, int[] prompt, int maxTokens, Sampling sampling) {
}
