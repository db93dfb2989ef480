package dev.laneway.engine.forward;

/**
 * One step of a forward call bound to the state it runs on (its batch, buffers and KV cache), as the device runs it:
 * {@code work} computes the state's batch at this step, {@code info} says what it is for deadlines and diagnostics.
 */
public record BoundStep(StepInfo info, Runnable work) {
}
