package dev.laneway.spi;

import java.util.List;

/**
 * A token the model chose.
 *
 * @param id      the token id
 * @param logprob its natural-log probability under the model's distribution (before sampling filters); NaN when
 *                log-probabilities were not asked for
 * @param top     the most likely alternatives with their log-probabilities, most likely first (empty unless asked)
 */
public record GeneratedToken(int id, float logprob, List<TokenLogprob> top) {
    public GeneratedToken {
        top = List.copyOf(top);
    }

    /** A candidate token with its log-probability. */
    public record TokenLogprob(int id, float logprob) {
    }
}
