package dev.laneway.engine.kernels;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A weight matrix of {@code rows} outputs by {@code cols} inputs, in one of the container's storage layouts
 * (docs/container.md), viewed in place in its memory-mapped file.
 *
 * <p>Plain layouts are row-major: element (r, c) is element {@code r * cols + c}. Tile layouts store 32×256 tiles
 * (32 rows by 256 columns), rows zero-padded to a multiple of 32 and columns to a multiple of 256; tile (i, j) is
 * chunk {@code i * paddedCols / 256 + j}, each chunk {@link Layout#tileBytes()} bytes.
 *
 * @param name   the tensor's name, for messages
 * @param layout how elements are stored
 * @param rows   output rows (unpadded)
 * @param cols   input columns (unpadded)
 * @param data   the bytes, little-endian, position 0
 */
public record Matrix(String name, Layout layout, int rows, int cols, ByteBuffer data) {
    /** Rows per tile. */
    public static final int TILE_ROWS = 32;
    /** Columns per tile. */
    public static final int TILE_COLS = 256;

    public Matrix {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(layout, "layout");
        if (rows < 1 || cols < 1) {
            throw new IllegalArgumentException(name + ": rows and cols must be positive");
        }
        data = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long expected = layout.bytes(rows, cols);
        if (data.remaining() != expected) {
            throw new IllegalArgumentException(name + ": " + layout + " " + rows + "x" + cols + " needs " + expected
                    + " bytes, has " + data.remaining());
        }
    }

    /** Rows rounded up to whole tiles (equal to {@link #rows()} for plain layouts). */
    public int paddedRows() {
        return layout.tiled() ? roundUp(rows, TILE_ROWS) : rows;
    }

    /** Columns rounded up to whole tiles (equal to {@link #cols()} for plain layouts). */
    public int paddedCols() {
        return layout.tiled() ? roundUp(cols, TILE_COLS) : cols;
    }

    /** Tiles per tile-row. */
    public int tilesPerRow() {
        return paddedCols() / TILE_COLS;
    }

    /** Byte offset of tile (i, j). */
    public long tileOffset(int i, int j) {
        return ((long) i * tilesPerRow() + j) * layout.tileBytes();
    }

    static int roundUp(int n, int multiple) {
        return (n + multiple - 1) / multiple * multiple;
    }

    /** Storage layouts of weight matrices. */
    public enum Layout {
        F32(4, 0),
        F16(2, 0),
        BF16(2, 0),
        /** docs/container.md {@code Q8}: bf16 d[g·32 + r] at 2i, int8 code of (r, c) at 512 + c·32 + r; weight = d·code. */
        TILES_Q8(0, 8704),
        /**
         * docs/container.md {@code q4_1}: bf16 scale at 2i and zero at 512 + 2i (i = g·32 + r), 4-bit code of (r, c) at
         * 1024 + ((r/16)·8 + g)·256 + 8·(c%32) + (r%16)/2, low nibble for even r; weight = code·scale + zero.
         */
        TILES_Q4_1(0, 5120),
        /**
         * docs/container.md {@code Q4_K}: u8 scale[i] at i, u8 min[i] at 256 + i, codes at 512 + c·16 + r/2 (even r low
         * nibble), bf16 S[r] at 4608 + 2r, bf16 M[r] at 4672 + 2r; weight = S[r]·scale·code + M[r]·min.
         */
        TILES_Q4_K(0, 4736);

        private final int elementBytes;
        private final int tileBytes;

        Layout(int elementBytes, int tileBytes) {
            this.elementBytes = elementBytes;
            this.tileBytes = tileBytes;
        }

        public boolean tiled() {
            return tileBytes > 0;
        }

        /** Bytes of one tile; 0 for plain layouts. */
        public int tileBytes() {
            return tileBytes;
        }

        /** Bytes of one element; 0 for tile layouts. */
        public int elementBytes() {
            return elementBytes;
        }

        /** Bytes a rows×cols matrix takes, padding included. */
        public long bytes(int rows, int cols) {
            if (tiled()) {
                // in longs: a size near 2^31 rounds up past an int
                return (rows + TILE_ROWS - 1L) / TILE_ROWS * ((cols + TILE_COLS - 1L) / TILE_COLS) * tileBytes;
            }
            return (long) rows * cols * elementBytes;
        }

        /** The layout of a tile chunk of this many bytes, as docs/container.md tells them apart. */
        public static java.util.Optional<Layout> ofTileBytes(long bytes) {
            for (Layout l : values()) {
                if (l.tiled() && l.tileBytes == bytes) {
                    return java.util.Optional.of(l);
                }
            }
            return java.util.Optional.empty();
        }
    }
}
