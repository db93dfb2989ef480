package dev.laneway.engine.kernels;

import java.nio.ByteBuffer;

/**
 * Reads weights out of the container's 32×256 tiles (docs/container.md), one row at a time. Plain and slow on purpose: the
 * reference that faster kernels are checked against.
 */
public final class Tiles {
    private Tiles() {
    }

    /** Row {@code r} of a tiled matrix, dequantized into {@code out[offset .. offset + cols)}. */
    public static void decodeRow(Matrix m, int r, float[] out, int offset) {
        ByteBuffer d = m.data();
        int tileRow = r / Matrix.TILE_ROWS;
        int rr = r % Matrix.TILE_ROWS;
        for (int j = 0; j < m.tilesPerRow(); j++) {
            int base = (int) m.tileOffset(tileRow, j);
            int c0 = j * Matrix.TILE_COLS;
            int n = Math.min(Matrix.TILE_COLS, m.cols() - c0);
            for (int c = 0; c < n; c++) {
                out[offset + c0 + c] = switch (m.layout()) {
                    case TILES_Q8 -> q8(d, base, rr, c);
                    case TILES_Q4_1 -> q4_1(d, base, rr, c);
                    case TILES_Q4_K -> q4k(d, base, rr, c);
                    default -> throw new IllegalArgumentException(m.name() + " is not tiled");
                };
            }
        }
    }

    /** Q8: bf16 d[i] at 2i (i = g·32 + r, g the 32-column group), int8 code at 512 + c·32 + r; weight = d·code. */
    static float q8(ByteBuffer d, int base, int r, int c) {
        int i = (c / 32) * 32 + r;
        float scale = Floats.bf16ToFloat(d.getShort(base + 2 * i));
        return scale * d.get(base + 512 + c * 32 + r);
    }

    /**
     * q4_1: bf16 scale at 2i, bf16 zero at 512 + 2i (i = g·32 + r), code at 1024 + ((r/16)·8 + g)·256 + 8·(c%32)
     * + (r%16)/2, low nibble for even r; weight = code·scale + zero.
     */
    static float q4_1(ByteBuffer d, int base, int r, int c) {
        int g = c / 32;
        int i = g * 32 + r;
        float scale = Floats.bf16ToFloat(d.getShort(base + 2 * i));
        float zero = Floats.bf16ToFloat(d.getShort(base + 512 + 2 * i));
        int b = d.get(base + 1024 + ((r / 16) * 8 + g) * 256 + 8 * (c % 32) + (r % 16) / 2) & 0xff;
        int code = (r % 2 == 0) ? b & 0x0f : b >>> 4;
        return code * scale + zero;
    }

    /**
     * Q4_K: u8 scale[i] at i, u8 min[i] at 256 + i (i = g·32 + r), code at 512 + c·16 + r/2 (even r low nibble),
     * bf16 S[r] at 4608 + 2r, bf16 M[r] at 4672 + 2r; weight = S[r]·scale·code + M[r]·min.
     */
    static float q4k(ByteBuffer d, int base, int r, int c) {
        int i = (c / 32) * 32 + r;
        int scale = d.get(base + i) & 0xff;
        int min = d.get(base + 256 + i) & 0xff;
        int b = d.get(base + 512 + c * 16 + r / 2) & 0xff;
        int code = (r % 2 == 0) ? b & 0x0f : b >>> 4;
        float bigS = Floats.bf16ToFloat(d.getShort(base + 4608 + 2 * r));
        float bigM = Floats.bf16ToFloat(d.getShort(base + 4672 + 2 * r));
        return bigS * scale * code + bigM * min;
    }
}
