package dev.laneway.engine.q4nx;

import dev.laneway.engine.kernels.Matrix;

import java.util.Optional;

/**
 * The conventions of the Q4NX container file (docs/container.md), shared by {@link Q4nxWriter} and
 * {@link Q4nxFile}.
 *
 * <ul>
 *   <li>The safetensors layout; the JSON header is space-padded to a multiple of {@link #ALIGNMENT} bytes and every
 *       tensor's data_offsets begin is a multiple of {@link #ALIGNMENT}.</li>
 *   <li>{@code __metadata__} holds {@code "format": "q4nx"}.</li>
 *   <li>A quantized weight of {@code rows × cols} is an {@code I8} tensor of 32×256 tiles of shape
 *       {@code [paddedRows / 32, paddedCols / 256, tileBytes]} (tile (i, j) at index i·paddedCols/256 + j), its kind
 *       told by the tile size (5120 q4_1, 4736 Q4_K, 8704 Q8). Padding loses the true size, so
 *       {@code __metadata__} records it under {@code "shape:<tensor name>"} as {@code "rows,cols"}.</li>
 * </ul>
 */
public final class Q4nx {
    /** The container's weight file inside a container directory. */
    public static final String FILE_NAME = "model.q4nx";
    /** The {@code __metadata__} key naming the format, and its value. */
    public static final String FORMAT_KEY = "format";
    public static final String FORMAT = "q4nx";
    /** Header padding and tensor alignment, in bytes. */
    public static final int ALIGNMENT = 64;
    /**
     * The {@code __metadata__} key that says how q/k rows pair for RoPE: {@code interleaved} (llama.cpp's order, kept
     * by packs of GGUF llama files) or {@code halves} (Hugging Face's, the default when a file does not say).
     */
    public static final String ROPE_PAIRS_KEY = "rope_pairs";
    /** Prefix of the {@code __metadata__} keys that record a tile tensor's logical {@code rows,cols}. */
    public static final String SHAPE_KEY_PREFIX = "shape:";

    private Q4nx() {
    }

    /** The {@code __metadata__} key of a tile tensor's logical shape. */
    public static String shapeKey(String tensorName) {
        return SHAPE_KEY_PREFIX + tensorName;
    }

    /** Tiles of a rows × cols matrix. */
    public static long tileCount(int rows, int cols) {
        // in longs: a recorded shape near 2^31 rounds up past an int
        return ((rows + Matrix.TILE_ROWS - 1L) / Matrix.TILE_ROWS) * ((cols + Matrix.TILE_COLS - 1L) / Matrix.TILE_COLS);
    }

    /** The tile shape {@code [paddedRows / 32, paddedCols / 256, tileBytes]}. */
    public static long[] tileShape(Matrix.Layout layout, int rows, int cols) {
        return new long[]{(rows + Matrix.TILE_ROWS - 1) / Matrix.TILE_ROWS,
                (cols + Matrix.TILE_COLS - 1) / Matrix.TILE_COLS, layout.tileBytes()};
    }

    /** The tile layout whose tiles make up {@code bytes} for a rows × cols matrix, if any. */
    public static Optional<Matrix.Layout> layoutOf(long bytes, int rows, int cols) {
        long tiles = tileCount(rows, cols);
        if (tiles == 0 || bytes % tiles != 0) {
            return Optional.empty();
        }
        return Matrix.Layout.ofTileBytes(bytes / tiles);
    }
}
