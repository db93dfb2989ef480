package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/**
 * Turns a {@code [rows, cols]} weight tensor into the container's 32×256 tiles, one band of 32 rows at a time, so a
 * large model streams through a buffer of one band. Rows are padded to a multiple of 32 and columns to a multiple of
 * 256 with zeros.
 *
 * <p>GGUF Q4_0, Q4_1 and Q4_K become {@code q4_1} tiles, Q4_K also {@code Q4_K} tiles, and Q8_0 {@code Q8} tiles,
 * exactly: the codes are copied and only the scales are rounded to bf16 (see {@link #exact()}). Any other source is
 * read as floats and quantized: to Q8 with d = max|w|/127 per row and 32-column group, or to q4_1 with the group's
 * min and (max − min)/15. Floats cannot be quantized to Q4_K tiles.
 *
 * <p>Not thread-safe; bands are independent, so one quantizer per thread can share the work.
 */
public final class TileQuantizer {
    private final String name;
    private final Layout layout;
    private final int rows;
    private final int cols;
    private final boolean exact;
    private final RowDecoder source;
    private final DType sourceType;
    /** One band of floats (float sources only), 32 × paddedCols. */
    private float[] band;

    private TileQuantizer(Tensor tensor, Layout layout, IntUnaryOperator rowOrder) {
        this.name = tensor.name();
        this.layout = layout;
        this.source = new RowDecoder(tensor, rowOrder);
        this.sourceType = tensor.dtype();
        this.rows = (int) tensor.dim(0);
        this.cols = (int) tensor.dim(1);
        this.exact = BlockTileConverter.converts(sourceType, layout);
    }

    /**
     * A quantizer of {@code tensor} (rank 2: {@code [rows, cols]}) into {@code layout} tiles.
     *
     * @throws IllegalArgumentException if the tensor is not a matrix, its type cannot be read, or the conversion is
     *                                  not offered (floats to Q4_K tiles)
     */
    public static TileQuantizer of(Tensor tensor, Layout layout) {
        return of(tensor, layout, IntUnaryOperator.identity());
    }

    /** As {@link #of(Tensor, Layout)}, the matrix's row r being the tensor's row {@code rowOrder(r)}. */
    public static TileQuantizer of(Tensor tensor, Layout layout, IntUnaryOperator rowOrder) {
        if (!layout.tiled()) {
            throw new IllegalArgumentException(layout + " is not a tile layout");
        }
        if (tensor.rank() != 2 || tensor.dim(0) < 1 || tensor.dim(1) < 1 || tensor.dim(0) > Integer.MAX_VALUE
                || tensor.dim(1) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor " + tensor.name() + " " + Arrays.toString(tensor.shape())
                    + " is not a [rows, cols] matrix");
        }
        if (layout == Layout.TILES_Q4_K && !BlockTileConverter.converts(tensor.dtype(), layout)) {
            throw new IllegalArgumentException("tensor " + tensor.name() + ": Q4_K tiles are made only from GGUF Q4_K, not "
                    + tensor.dtype());
        }
        return new TileQuantizer(tensor, layout, rowOrder);
    }

    /** Whether {@code source} blocks convert to {@code target} tiles by copying codes (exact up to bf16 scales). */
    public static boolean isExact(DType source, Layout target) {
        return BlockTileConverter.converts(source, target);
    }

    public String name() {
        return name;
    }

    public Layout layout() {
        return layout;
    }

    /** Rows of the matrix, unpadded. */
    public int rows() {
        return rows;
    }

    /** Columns of the matrix, unpadded. */
    public int cols() {
        return cols;
    }

    /** Whether codes are copied from the source's blocks rather than requantized. */
    public boolean exact() {
        return exact;
    }

    /** Bands of 32 rows. */
    public int bands() {
        return (rows + Matrix.TILE_ROWS - 1) / Matrix.TILE_ROWS;
    }

    /** Bytes of one band: its tiles, side by side. */
    public int bandBytes() {
        return paddedCols() / Matrix.TILE_COLS * layout.tileBytes();
    }

    /** Bytes of all tiles. */
    public long bytes() {
        return layout.bytes(rows, cols);
    }

    private int paddedCols() {
        return (cols + Matrix.TILE_COLS - 1) / Matrix.TILE_COLS * Matrix.TILE_COLS;
    }

    /** Encodes band {@code band} (rows 32·band ..) into {@code out[0 .. bandBytes())}. */
    public void encodeBand(int band, byte[] out) {
        if (band < 0 || band >= bands()) {
            throw new IndexOutOfBoundsException(name + " has " + bands() + " bands, asked for " + band);
        }
        Arrays.fill(out, 0, bandBytes(), (byte) 0);
        int first = band * Matrix.TILE_ROWS;
        int count = Math.min(Matrix.TILE_ROWS, rows - first);
        if (exact) {
            for (int r = 0; r < count; r++) {
                byte[] raw = source.raw(first + r);
                BlockTileConverter.row(sourceType, layout, raw, cols, r, out);
            }
            return;
        }
        float[] floats = floatBand(first, count);
        if (layout == Layout.TILES_Q8) {
            FloatTileEncoder.q8(floats, paddedCols(), out);
        } else {
            FloatTileEncoder.q4_1(floats, paddedCols(), out);
        }
    }

    private float[] floatBand(int first, int count) {
        int padded = paddedCols();
        if (band == null) {
            band = new float[Matrix.TILE_ROWS * padded];
        }
        Arrays.fill(band, 0f);
        for (int r = 0; r < count; r++) {
            source.read(first + r, band, r * padded);
        }
        int[] bad = FloatTileEncoder.firstNonFinite(band, count, cols, padded);
        if (bad != null) {
            throw new IllegalArgumentException("tensor " + name + " has a non-finite weight " + band[bad[0] * padded
                    + bad[1]] + " at row " + (first + bad[0]) + ", column " + bad[1]);
        }
        return band;
    }

    /** Encodes every band in order and hands each to {@code sink}, through one reused buffer. */
    public void forEachBand(ChunkSink sink) throws IOException {
        byte[] out = new byte[bandBytes()];
        ByteBuffer view = ByteBuffer.wrap(out);
        for (int b = 0; b < bands(); b++) {
            encodeBand(b, out);
            view.clear();
            sink.accept(view);
        }
    }

    /** All tiles on the heap, as a matrix: for small models and tests. */
    public Matrix toMatrix() {
        if (bytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(name + " needs " + bytes() + " bytes, too many for one array");
        }
        ByteBuffer all = ByteBuffer.allocate((int) bytes());
        try {
            forEachBand(all::put);
        } catch (IOException e) {
            throw new IllegalStateException("a heap buffer cannot fail", e);
        }
        return new Matrix(name, layout, rows, cols, all.flip());
    }
}
