package dev.laneway.engine.forward;

/** A plan that does not fit the model: a tensor it names is missing or has the wrong shape. */
public class PlanException extends RuntimeException {
    public PlanException(String message) {
        super(message);
    }
}
