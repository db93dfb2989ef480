package dev.laneway.runtime.routes;

/** No route can serve a model with the options given. The message says why, naming the route and the option. */
public class DispatchException extends Exception {
    public DispatchException(String message) {
        super(message);
    }
}
