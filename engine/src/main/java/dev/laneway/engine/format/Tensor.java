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

    /**
     * Rows {@code from} to {@code from + count} of a matrix, named {@code newName}: a view of the same bytes, since a
     * row of any element type (blocks included) is stored whole and rows follow each other. Fused projections (a
     * q/k/v or gate/up matrix stored as one) are split this way, exactly.
     */
    public Tensor rows(String newName, long from, long count) {
        if (rank() != 2 || from < 0 || count < 1 || from + count > shape[0]) {
            throw new IllegalArgumentException(name + " " + Arrays.toString(shape) + " has no rows " + from + ".."
                    + (from + count - 1));
        }
        long rowBytes = dtype.bytesFor(shape[1]);
        ByteBuffer bytes = data();
        bytes.position(Math.toIntExact(from * rowBytes)).limit(Math.toIntExact((from + count) * rowBytes));
        return new Tensor(newName, dtype, new long[]{count, shape[1]}, bytes);
    }

    /**
     * Matrix {@code index} of a stack of matrices {@code [count, rows, cols]} (a mixture's experts stored as one
     * tensor), named {@code newName}: a view of the same bytes.
     */
    public Tensor slab(String newName, long index) {
        if (rank() != 3 || index < 0 || index >= shape[0]) {
            throw new IllegalArgumentException(name + " " + Arrays.toString(shape) + " has no matrix " + index);
        }
        long bytes = dtype.bytesFor(shape[1] * shape[2]);
        ByteBuffer data = data();
        data.position(Math.toIntExact(index * bytes)).limit(Math.toIntExact((index + 1) * bytes));
        return new Tensor(newName, dtype, new long[]{shape[1], shape[2]}, data);
    }

    @Override
    public String toString() {
        return name + " " + dtype + " " + Arrays.toString(shape);
    }
}
