package dev.laneway.spi;

/**
 * A request that cannot be served as asked; the client's mistake, never the server's.
 */
public class InvalidRequestException extends RuntimeException {
    private final String param;

    /**
     * @param param   the request field at fault, e.g. {@code prompt}
     * @param message what is wrong, for the client
     */
    public InvalidRequestException(String param, String message) {
        super(message);
        this.param = param;
    }

    /** The request field at fault. */
    public String param() {
        return param;
    }
}
