package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;

/**
 * Tensors to floats: F32, F16, BF16 and the ggml block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K,
 * Q6_K and Q8_K. For row after row of a large tensor, use a {@link RowDecoder}, which reuses its buffers.
 */
public final class Dequant {
    private Dequant() {
    }

    /** Whether tensors of this type can be read as floats. */
    public static boolean supports(DType type) {
        return type == DType.F32 || type == DType.F16 || type == DType.BF16 || GgmlBlocks.supports(type);
    }

    /** Row {@code row} of {@code t} (see {@link RowDecoder}) into {@code out[offset .. offset + cols)}. */
    public static void rowToFloat(Tensor t, long row, float[] out, int offset) {
        new RowDecoder(t).read(row, out, offset);
    }

    /** The whole tensor as floats, row-major. Meant for tensors that fit on the heap: norms, small models. */
    public static float[] toFloat(Tensor t) {
        RowDecoder rows = new RowDecoder(t);
        long n = rows.rows() * rows.cols();
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("tensor " + t.name() + " has " + n + " elements, too many for one array");
        }
        float[] out = new float[(int) n];
        for (long r = 0; r < rows.rows(); r++) {
            rows.read(r, out, (int) (r * rows.cols()));
        }
        return out;
    }

    /**
     * Decodes {@code count} elements of a block type (a whole number of blocks) from {@code src[at ..]} into
     * {@code out[offset ..]}.
     */
    public static void blocksToFloat(DType type, byte[] src, int at, int count, float[] out, int offset) {
        if (!GgmlBlocks.supports(type)) {
            throw new IllegalArgumentException("not a supported block type: " + type);
        }
        if (count % type.blockSize() != 0) {
            throw new IllegalArgumentException(count + " elements is not a whole number of " + type + " blocks");
        }
        GgmlBlocks.decode(type, src, at, count / type.blockSize(), out, offset);
    }
}
