package dev.laneway.runtime.api;

import dev.laneway.spi.GenerationResult;

import java.util.List;

/**
 * How one choice ended.
 *
 * @param index        the choice's index in the response
 * @param text         its text, without a matched stop string
 * @param finishReason {@code stop} or {@code length}
 * @param logprobs     the reported tokens (empty unless asked)
 * @param result       the model's account: token counts and timings
 */
record ChoiceOutcome(int index, String text, String finishReason, List<TokenLogprob> logprobs,
                     GenerationResult result) {

    ChoiceOutcome {
        logprobs = List.copyOf(logprobs);
    }
}
