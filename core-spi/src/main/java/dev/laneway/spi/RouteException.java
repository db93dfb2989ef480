package dev.laneway.spi;

/** A route could not open a directory it claimed. The message names what is wrong and where. */
public class RouteException extends Exception {
    public RouteException(String message) {
        super(message);
    }

    public RouteException(String message, Throwable cause) {
        super(message, cause);
    }
}
