package dev.laneway.spi;

import java.util.Objects;
import java.util.Optional;

/**
 * How to pack.
 *
 * @param quant the weight format: {@code q8}, {@code q4_1}, {@code bf16} or {@code f32}; empty picks a default
 *              from the source
 * @param lane  also write a lane manifest ({@code npu/lane.json}) for the host kernel set
 */
public record PackOptions(Optional<String> quant, boolean lane) {
    public PackOptions {
        Objects.requireNonNull(quant, "quant");
    }

    public static PackOptions defaults() {
        return new PackOptions(Optional.empty(), false);
    }
}
