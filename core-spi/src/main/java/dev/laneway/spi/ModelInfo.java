package dev.laneway.spi;

import java.util.Map;

/**
 * What a served model is and where it runs.
 *
 * @param architecture  e.g. {@code llama}
 * @param contextLength the most positions (prompt plus generated tokens) one generation may use
 * @param vocabSize     the number of tokens
 * @param route         the name of the route serving it
 * @param device        the device it runs on, e.g. {@code cpu}
 * @param metadata      further facts for {@code /v1/models} and {@code inspect} (dtype, parameter count, ...)
 */
public record ModelInfo(String architecture, int contextLength, int vocabSize, String route, String device,
                        Map<String, String> metadata) {
    public ModelInfo {
        Checks.nonBlank(architecture, "architecture");
        Checks.nonBlank(route, "route");
        Checks.nonBlank(device, "device");
        if (contextLength < 1 || vocabSize < 1) {
            throw new IllegalArgumentException("contextLength and vocabSize must be positive");
        }
        metadata = Map.copyOf(metadata);
    }
}
