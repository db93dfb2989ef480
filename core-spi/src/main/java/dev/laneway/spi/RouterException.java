package dev.laneway.spi;

/**
 * The Laya router could not decide where a request runs (its scorer failed). That request fails; the model stays
 * usable and the next request is routed afresh.
 */
public class RouterException extends RuntimeException {
    public RouterException(String message, Throwable cause) {
        super(message, cause);
    }

    public RouterException(String message) {
        super(message);
    }
}
