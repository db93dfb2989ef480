package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Floats;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.function.IntUnaryOperator;

/**
 * Reads the rows of a tensor as floats, whatever its element type. A tensor of shape {@code [..., cols]} has
 * {@code elements / cols} rows of {@code cols} elements (a vector is one row). Each row is fetched with one bulk read
 * into a scratch array that the decoder keeps, so reading row after row allocates nothing. Not thread-safe: one
 * decoder per thread.
 */
public final class RowDecoder {
    private final Tensor tensor;
    private final DType type;
    private final long rows;
    private final int cols;
    private final int rowBytes;
    private final ByteBuffer bytes;
    private final FloatBuffer floats;
    private final ShortBuffer shorts;
    private final IntUnaryOperator order;
    private byte[] scratch = new byte[0];
    private short[] halves = new short[0];

    public RowDecoder(Tensor tensor) {
        this(tensor, IntUnaryOperator.identity());
    }

    /**
     * A decoder whose row {@code r} is the tensor's row {@code order(r)}: a permutation of the rows (a pack putting
     * q/k rows in another order).
     */
    public RowDecoder(Tensor tensor, IntUnaryOperator order) {
        this.tensor = tensor;
        this.order = order;
        this.type = tensor.dtype();
        if (!Dequant.supports(type)) {
            throw new IllegalArgumentException("tensor " + tensor.name() + ": cannot dequantize " + type);
        }
        long last = tensor.rank() == 0 ? 1 : tensor.dim(tensor.rank() - 1);
        if (last > Integer.MAX_VALUE || last % type.blockSize() != 0) {
            throw new IllegalArgumentException("tensor " + tensor.name() + " has rows of " + last + " elements, not a"
                    + " whole number of " + type + " blocks of " + type.blockSize());
        }
        this.cols = (int) last;
        this.rows = cols == 0 ? 0 : tensor.elements() / cols;
        this.rowBytes = (int) type.bytesFor(cols);
        this.bytes = tensor.data();
        if (bytes.remaining() != rows * rowBytes) {
            throw new IllegalArgumentException("tensor " + tensor.name() + " has " + bytes.remaining()
                    + " bytes, its shape needs " + rows * rowBytes);
        }
        this.floats = type == DType.F32 ? bytes.asFloatBuffer() : null;
        this.shorts = type == DType.F16 || type == DType.BF16 ? bytes.asShortBuffer() : null;
    }

    public Tensor tensor() {
        return tensor;
    }

    /** The number of rows: all elements but the last dimension's. */
    public long rows() {
        return rows;
    }

    /** Elements per row: the last dimension. */
    public int cols() {
        return cols;
    }

    /** Bytes per row in the tensor's own encoding. */
    public int rowBytes() {
        return rowBytes;
    }

    /** Row {@code row}, as floats, into {@code out[offset .. offset + cols)}. */
    public void read(long row, float[] out, int offset) {
        checkRow(row);
        int index = (int) (order.applyAsInt((int) row) * (long) cols);
        switch (type) {
            case F32 -> floats.get(index, out, offset, cols);
            case F16, BF16 -> {
                if (halves.length < cols) {
                    halves = new short[cols];
                }
                shorts.get(index, halves, 0, cols);
                boolean bf16 = type == DType.BF16;
                for (int c = 0; c < cols; c++) {
                    out[offset + c] = bf16 ? Floats.bf16ToFloat(halves[c]) : Floats.f16ToFloat(halves[c]);
                }
            }
            default -> {
                byte[] raw = raw(row);
                GgmlBlocks.decode(type, raw, 0, cols / type.blockSize(), out, offset);
            }
        }
    }

    /**
     * Row {@code row}'s bytes, undecoded, in an array the decoder reuses (valid until the next call); the first
     * {@link #rowBytes()} bytes are the row.
     */
    public byte[] raw(long row) {
        checkRow(row);
        if (scratch.length < rowBytes) {
            scratch = new byte[rowBytes];
        }
        bytes.get((int) (order.applyAsInt((int) row) * (long) rowBytes), scratch, 0, rowBytes);
        return scratch;
    }

    private void checkRow(long row) {
        if (row < 0 || row >= rows) {
            throw new IndexOutOfBoundsException("tensor " + tensor.name() + " has " + rows + " rows, asked for row "
                    + row);
        }
    }
}
