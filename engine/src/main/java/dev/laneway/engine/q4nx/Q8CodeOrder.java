package dev.laneway.engine.q4nx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Optional;

/**
 * The two orders in which Q4NX files hold the codes of a Q8 tile (8704 bytes: 256 bf16 scales, then 32×256 int8
 * codes). Both have the same size and nothing else in a tile tells them apart, so a file names its order in
 * {@code __metadata__} under {@value #KEY}, or is one Laneway wrote (column-major).
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
