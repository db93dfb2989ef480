package dev.laneway.engine.grammar;

import dev.laneway.spi.InvalidRequestException;

/** A grammar that cannot be used as written: the client's mistake, reported against the {@code grammar} field. */
public final class GrammarException extends InvalidRequestException {
    public GrammarException(String message) {
        super("grammar", message);
    }
}
