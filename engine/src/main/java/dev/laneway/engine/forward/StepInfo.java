package dev.laneway.engine.forward;

import java.util.List;

/**
 * What a step is, for diagnostics.
 *
 * @param kernel  the kernel's name
 * @param layer   its layer, or -1 outside the layers
 * @param tensor  the tensor it reads, or empty
 * @param buffers the state buffers it reads and writes, by name
 */
public record StepInfo(String kernel, int layer, String tensor, List<String> buffers) {
}
