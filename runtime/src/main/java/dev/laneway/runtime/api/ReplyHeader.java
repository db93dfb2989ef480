package dev.laneway.runtime.api;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * What every response and chunk of one request repeats.
 *
 * @param id      e.g. {@code chatcmpl-...}, the same in every chunk
 * @param created seconds since the epoch
 * @param model   the served model's id
 */
record ReplyHeader(String id, long created, String model) {
    private static final SecureRandom RANDOM = new SecureRandom();

    static ReplyHeader fresh(String idPrefix, String model) {
        byte[] bytes = new byte[18];
        RANDOM.nextBytes(bytes);
        String id = idPrefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return new ReplyHeader(id, System.currentTimeMillis() / 1000, model);
    }
}
