package dev.laneway.runtime.api;

import java.util.List;

/**
 * A generated token with its log-probability, as the API reports it.
 *
 * @param token      the token's own text
 * @param logprob    its natural-log probability
 * @param top        the most likely tokens at its position, most likely first
 * @param textOffset where its text starts in the choice's text
 */
record TokenLogprob(int id, String token, float logprob, List<Candidate> top, int textOffset) {

    TokenLogprob {
        top = List.copyOf(top);
    }

    /** An alternative at the same position. */
    record Candidate(int id, String token, float logprob) {
    }
}
