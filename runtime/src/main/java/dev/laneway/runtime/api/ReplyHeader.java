package dev.laneway.runtime.api;

import dev.laneway.spi.ServedModel;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * What every response and chunk of one request repeats.
 *
 * @param id                e.g. {@code chatcmpl-...}, the same in every chunk
 * @param created           seconds since the epoch
 * @param model             the served model's id
 * @param systemFingerprint OpenAI's name for what served it: {@code b} (build), Laneway's version, the route and
 *                          the device, e.g. {@code b0.1.0-generic-cpu}
 */
record ReplyHeader(String id, long created, String model, String systemFingerprint) {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String VERSION = java.util.Optional.ofNullable(ReplyHeader.class.getPackage()
            .getImplementationVersion()).orElse("dev");

    /** A new answer's header, naming the model as the request did ({@code name}: the model's id or an adapter's). */
    static ReplyHeader fresh(String idPrefix, ServedModel model, String name) {
        byte[] bytes = new byte[18];
        RANDOM.nextBytes(bytes);
        String id = idPrefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return new ReplyHeader(id, System.currentTimeMillis() / 1000, name, "b" + VERSION + "-"
                + model.info().route() + "-" + model.info().device());
    }
}
