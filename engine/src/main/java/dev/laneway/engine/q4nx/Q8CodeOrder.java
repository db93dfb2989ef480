package dev.laneway.engine.q4nx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Optional;

/**
 * The two orders in which Q4NX files hold the codes of a Q8 tile (8704 bytes: 256 bf16 scales, then 32×256 int8
 * codes). Both have the same size, so a file names its order in {@code __metadata__} under {@value #KEY}, or is one
 * Laneway wrote (column-major); otherwise the codes themselves tell ({@link #fromCodes}).
 */
public enum Q8CodeOrder {
    /** Code (r, c) at byte 512 + 32c + r: Laneway's order, and the one the 1bit engine reads. */
    COLUMN_MAJOR("column-major"),
    /** Code (r, c) at byte 512 + 4096·(r / 16) + 16c + r % 16: FastFlowLM's converter writes this. */
    ROW_HALVES("row-halves");

    /** The {@code __metadata__} key that names the order. */
    public static final String KEY = "q8_order";
    private static final int SCALES = 512;
    private static final int TILE = 8704;

    private final String value;

    Q8CodeOrder(String value) {
        this.value = value;
    }

    /** The {@value #KEY} value naming this order. */
    public String value() {
        return value;
    }

    /** The order a {@value #KEY} value names. */
    public static Optional<Q8CodeOrder> named(String value) {
        for (Q8CodeOrder o : values()) {
            if (o.value.equals(value.trim().toLowerCase(Locale.ROOT))) {
                return Optional.of(o);
            }
        }
        return Optional.empty();
    }

    /** How many tiles of a tensor {@link #fromCodes} reads at most. */
    private static final int TILES_READ = 64;

    /** Where this order puts code (r, c) of a tile, r the row (0..31) and c the column (0..255). */
    private int at(int r, int c) {
        return this == COLUMN_MAJOR ? SCALES + 32 * c + r : SCALES + 4096 * (r / 16) + 16 * c + r % 16;
    }

    /**
     * The order the codes of {@code tiles} show, if they show one. Quantised with absmax scales (scale = max|w| / 127
     * for each row's group of 32 columns, the codes that share a scale), every group that is not all zeros holds a
     * code of ±127 where it is read in its true order; read in the other order a group gathers codes of other groups
     * and most lack one. The order in which every group of the first tiles holds one is the answer; none when both
     * orders or neither do (a quantiser of another kind, or codes too uniform to tell).
     */
    public static Optional<Q8CodeOrder> fromCodes(ByteBuffer tiles) {
        int n = Math.min(TILES_READ, tiles.remaining() / TILE);
        byte[] tile = new byte[TILE];
        boolean columnMajor = true;
        boolean rowHalves = true;
        for (int t = 0; t < n && (columnMajor || rowHalves); t++) {
            tiles.get(tiles.position() + t * TILE, tile);
            columnMajor &= COLUMN_MAJOR.absmaxGroups(tile);
            rowHalves &= ROW_HALVES.absmaxGroups(tile);
        }
        if (n == 0 || columnMajor == rowHalves) {
            return Optional.empty();
        }
        return Optional.of(columnMajor ? COLUMN_MAJOR : ROW_HALVES);
    }

    /** Whether every group of the tile, read in this order, is as absmax writes one: all zeros, or holding ±127. */
    private boolean absmaxGroups(byte[] tile) {
        for (int r = 0; r < 32; r++) {
            for (int g = 0; g < 8; g++) {
                boolean zeros = true;
                boolean extreme = false;
                for (int c = 32 * g; c < 32 * g + 32 && !extreme; c++) {
                    byte code = tile[at(r, c)];
                    extreme = code == 127 || code == -127;
                    zeros &= code == 0;
                }
                if (!extreme && !zeros) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Q8 tiles in row-halves order, rewritten column-major into a new direct buffer. */
    static ByteBuffer toColumnMajor(ByteBuffer rowHalves) {
        ByteBuffer src = rowHalves.duplicate();
        int tiles = src.remaining() / TILE;
        ByteBuffer out = ByteBuffer.allocateDirect(src.remaining());
        byte[] in = new byte[TILE];
        byte[] tile = new byte[TILE];
        for (int t = 0; t < tiles; t++) {
            src.get(in);
            System.arraycopy(in, 0, tile, 0, SCALES);
            for (int r = 0; r < 32; r++) {
                int from = SCALES + 4096 * (r / 16) + r % 16;
                for (int c = 0; c < 256; c++) {
                    tile[SCALES + 32 * c + r] = in[from + 16 * c];
                }
            }
            out.put(tile);
        }
        return out.flip().order(ByteOrder.LITTLE_ENDIAN);
    }
}
