package dev.laneway.runtime.api;

import java.nio.charset.StandardCharsets;
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

    /** A token's text as its UTF-8 bytes, each 0 to 255 (the {@code bytes} of OpenAI's and llama-server's logprobs). */
    static int[] utf8(String token) {
        byte[] raw = token.getBytes(StandardCharsets.UTF_8);
        int[] out = new int[raw.length];
        for (int i = 0; i < raw.length; i++) {
            out[i] = raw[i] & 0xff;
        }
        return out;
    }

    /** An alternative at the same position. */
    record Candidate(int id, String token, float logprob) {
    }
}
