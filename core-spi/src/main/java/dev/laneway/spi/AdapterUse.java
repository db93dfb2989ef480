package dev.laneway.spi;

import java.util.Objects;

/**
 * A LoRA adapter a generation applies, by the name it was loaded under, at a scale: 1 as trained, 0 not at all
 * (llama-server's per-request {@code lora} entries). The adapter's own {@code alpha / rank} multiplies the scale.
 */
public record AdapterUse(String name, float scale) {
    public AdapterUse {
        Objects.requireNonNull(name, "name");
        if (!Float.isFinite(scale)) {
            throw new IllegalArgumentException("adapter " + name + ": scale must be a finite number");
        }
    }
}
