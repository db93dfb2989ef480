package dev.laneway.engine.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A named tensor whose bytes are a read-only, little-endian view of a memory-mapped file; nothing is copied onto the
 * heap. Shapes are in row-major order, outermost first (the Hugging Face order): a weight of {@code out} rows and
 * {@code in} columns has shape {@code [out, in]}.
 *
 * @param name  the tensor's name in its file
 * @param dtype its element type
 * @param shape its dimensions, outermost first
 * @param data  its bytes, position 0 to limit
 */
public record Tensor(String name, DType dtype, long[] shape, ByteBuffer data) {
    public Tensor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
        data = data.slice().order(ByteOrder.LITTLE_ENDIAN).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Dimension {@code i}, outermost first. */
    public long dim(int i) {
        return shape[i];
    }

    public int rank() {
        return shape.length;
    }

    /** The number of elements. */
    public long elements() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** A fresh view of the bytes, positioned at 0. */
    @Override
    public ByteBuffer data() {
        return data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public String toString() {
        return name + " " + dtype + " " + Arrays.toString(shape);
    }
}
