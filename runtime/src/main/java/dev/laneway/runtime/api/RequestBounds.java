package dev.laneway.runtime.api;

/**
 * How much one request may ask for, so that no client can make the server parse, tokenize, compile or hold without
 * bound. A value over its bound is a 400 naming the field; bodies and headers over theirs are answered 413 and 431 by
 * the HTTP server itself ({@code quarkus.http.limits.*}).
 */
final class RequestBounds {
    /** Prompts of one completion request, and choices of all of them together. */
    static final int PROMPTS = 32;
    static final int CHOICES = 64;
    /** Choices per prompt ({@code n}). */
    static final int N = 16;
    /** Stop strings, and characters in each. */
    static final int STOPS = 16;
    static final int STOP_CHARS = 1024;
    /** Alternatives reported per token. */
    static final int TOP_LOGPROBS = 20;
    /** Characters of a cache salt. */
    static final int SALT_CHARS = 1024;
    /** Messages of one conversation. */
    static final int MESSAGES = 4096;
    /** Tools offered (OpenAI's own limit). */
    static final int TOOLS = 128;
    /** Entries of {@code logit_bias}. */
    static final int LOGIT_BIASES = 1024;
    /** Characters of a grammar, or of a JSON schema as written. */
    static final int GRAMMAR_CHARS = 64 * 1024;
    /** Inputs of one embeddings request (OpenAI's limit is 2048). */
    static final int EMBEDDING_INPUTS = 256;
    /** Extra context chunks of one infill request. */
    static final int INFILL_EXTRA = 64;

    private RequestBounds() {
    }

    /** Refuses {@code count} {@code things} in {@code field} when more than {@code max}. */
    static void atMost(String field, int count, int max, String things) {
        if (count > max) {
            throw ApiException.invalidValue(field, field + " holds " + count + " " + things + "; at most " + max
                    + " are allowed");
        }
    }
}
