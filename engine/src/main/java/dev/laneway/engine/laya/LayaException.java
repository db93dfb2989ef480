package dev.laneway.engine.laya;

import java.io.IOException;

/** A router checkpoint that cannot be used, or no device to route to. The message starts with {@code laya:}. */
public class LayaException extends IOException {
    public LayaException(String message) {
        super(message);
    }

    public LayaException(String message, Throwable cause) {
        super(message, cause);
    }
}
