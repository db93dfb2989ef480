package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Floats;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.IntUnaryOperator;

/**
 * Re-encodes a tensor as F32, F16 or BF16 (norms, biases, embeddings, or weights packed unquantized), a chunk of rows
 * at a time. A tensor already of the target type is passed through as it is, without decoding.
 */
public final class PlainConverter {
    /** Output chunks are about this size. */
    private static final int CHUNK_BYTES = 1 << 20;

    private final Tensor tensor;
    private final DType target;
    private final RowDecoder rows;
    private final boolean reordered;

    private PlainConverter(Tensor tensor, DType target, IntUnaryOperator rowOrder, boolean reordered) {
        this.tensor = tensor;
        this.target = target;
        this.rows = new RowDecoder(tensor, rowOrder);
        this.reordered = reordered;
    }

    /**
     * @throws IllegalArgumentException if {@code target} is not F32, F16 or BF16, or the tensor cannot be read
     */
    public static PlainConverter of(Tensor tensor, DType target) {
        return of(tensor, target, null);
    }

    /** As {@link #of(Tensor, DType)}, row r being the tensor's row {@code rowOrder(r)} (null: the same order). */
    public static PlainConverter of(Tensor tensor, DType target, IntUnaryOperator rowOrder) {
        if (target != DType.F32 && target != DType.F16 && target != DType.BF16) {
            throw new IllegalArgumentException("tensor " + tensor.name() + ": plain target must be F32, F16 or BF16, not "
                    + target);
        }
        return new PlainConverter(tensor, target, rowOrder == null ? IntUnaryOperator.identity() : rowOrder,
                rowOrder != null);
    }

    public DType dtype() {
        return target;
    }

    /** The shape, unchanged from the source. */
    public long[] shape() {
        return tensor.shape();
    }

    /** Bytes of the converted tensor. */
    public long bytes() {
        return rows.rows() * rows.cols() * target.blockBytes();
    }

    /** Converts all rows in order, handing chunks of whole rows to {@code sink}. */
    public void forEachChunk(ChunkSink sink) throws IOException {
        if (tensor.dtype() == target && !reordered) {
            ByteBuffer data = tensor.data();
            while (data.hasRemaining()) {
                int n = Math.min(CHUNK_BYTES, data.remaining());
                ByteBuffer chunk = data.slice().limit(n).order(ByteOrder.LITTLE_ENDIAN);
                sink.accept(chunk);
                data.position(data.position() + n);
            }
            return;
        }
        int cols = rows.cols();
        int outRowBytes = cols * target.blockBytes();
        int perChunk = Math.max(1, CHUNK_BYTES / Math.max(1, outRowBytes));
        float[] row = new float[cols];
        ByteBuffer out = ByteBuffer.allocate((int) Math.min((long) perChunk * outRowBytes, Math.max(bytes(), 1)))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (long r = 0; r < rows.rows(); r++) {
            if (out.remaining() < outRowBytes) {
                sink.accept(out.flip());
                out.clear();
            }
            rows.read(r, row, 0);
            encode(row, out);
        }
        if (out.position() > 0) {
            sink.accept(out.flip());
        }
    }

    private void encode(float[] row, ByteBuffer out) {
        switch (target) {
            case F32 -> {
                out.asFloatBuffer().put(row);
                out.position(out.position() + row.length * 4);
            }
            case F16 -> {
                for (float v : row) {
                    out.putShort(Floats.floatToF16(v));
                }
            }
            default -> {
                for (float v : row) {
                    out.putShort(Floats.floatToBf16(v));
                }
            }
        }
    }

    /** The converted tensor on the heap: for small tensors and tests. */
    public ByteBuffer toBuffer() {
        if (bytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(tensor.name() + " needs " + bytes() + " bytes, too many for one array");
        }
        ByteBuffer all = ByteBuffer.allocate((int) bytes()).order(ByteOrder.LITTLE_ENDIAN);
        try {
            forEachChunk(all::put);
        } catch (IOException e) {
            throw new IllegalStateException("a heap buffer cannot fail", e);
        }
        return all.flip();
    }
}
