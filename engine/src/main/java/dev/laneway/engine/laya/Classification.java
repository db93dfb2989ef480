package dev.laneway.engine.laya;

import java.util.Objects;

/**
 * What a classifier made of a request.
 *
 * @param requestClass the class
 * @param confidence   from 0 (the choices were equally likely) to 1 (one choice had all the probability)
 */
public record Classification(RequestClass requestClass, double confidence) {
    public Classification {
        Objects.requireNonNull(requestClass, "requestClass");
        if (!(confidence >= 0 && confidence <= 1)) {
            throw new IllegalArgumentException("confidence must be in [0, 1], was " + confidence);
        }
    }
}
