package dev.laneway.spi;

import java.util.Objects;

/** Argument checks shared by the SPI records. */
final class Checks {
    private Checks() {
    }

    static String nonBlank(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        return value;
    }
}
