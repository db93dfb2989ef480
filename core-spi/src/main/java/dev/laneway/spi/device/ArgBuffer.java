package dev.laneway.spi.device;

import java.util.Objects;

/**
 * A kernel argument as diagnostics describe it.
 *
 * @param name the buffer's name
 * @param data a {@code float[]}, a {@code byte[]} or a {@link java.nio.ByteBuffer}; read only when a fault is recorded
 */
public record ArgBuffer(String name, Object data) {
    public ArgBuffer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(data, "data");
    }
}
