package dev.laneway.engine.quant;

import dev.laneway.engine.kernels.Floats;

/**
 * Puts fields into the container's 32×256 tiles (docs/container.md), the inverse of {@code kernels.Tiles}. A tile starts at
 * {@code base} in {@code t}; {@code r} is the row in the tile (0..31), {@code c} the column (0..255), {@code g = c / 32}
 * the 32-column group, and {@code i = g·32 + r} the index of that row's group. Code setters OR their nibble in, so the
 * tile must start zeroed.
 */
final class TileBytes {
    /** q4_1: bf16 scale[i] at 2i, bf16 zero[i] at 512 + 2i, codes from 1024. */
    static final int Q4_1_ZEROS = 512;
    static final int Q4_1_CODES = 1024;
    /** Q4_K: u8 scale[i] at i, u8 min[i] at 256 + i, codes from 512, bf16 S[r] at 4608 + 2r, M[r] at 4672 + 2r. */
    static final int Q4_K_MINS = 256;
    static final int Q4_K_CODES = 512;
    static final int Q4_K_S = 4608;
    static final int Q4_K_M = 4672;
    /** Q8: bf16 d[i] at 2i, int8 codes from 512. */
    static final int Q8_CODES = 512;

    private TileBytes() {
    }

    static void q8Scale(byte[] t, int base, int r, int g, short d) {
        putShort(t, base + 2 * (g * 32 + r), d);
    }

    static void q8Code(byte[] t, int base, int r, int c, int code) {
        t[base + Q8_CODES + c * 32 + r] = (byte) code;
    }

    static void q4_1Params(byte[] t, int base, int r, int g, short scale, short zero) {
        int i = g * 32 + r;
        putShort(t, base + 2 * i, scale);
        putShort(t, base + Q4_1_ZEROS + 2 * i, zero);
    }

    /** 4-bit code of (r, c) at 1024 + ((r/16)·8 + g)·256 + 8·(c%32) + (r%16)/2, low nibble for even r. */
    static void q4_1Code(byte[] t, int base, int r, int c, int code) {
        int at = base + Q4_1_CODES + ((r / 16) * 8 + c / 32) * 256 + 8 * (c % 32) + (r % 16) / 2;
        t[at] |= (byte) (code << ((r & 1) * 4));
    }

    static void q4KScaleMin(byte[] t, int base, int r, int g, int scale, int min) {
        int i = g * 32 + r;
        t[base + i] = (byte) scale;
        t[base + Q4_K_MINS + i] = (byte) min;
    }

    /** 4-bit code of (r, c) at 512 + c·16 + r/2, low nibble for even r. */
    static void q4KCode(byte[] t, int base, int r, int c, int code) {
        t[base + Q4_K_CODES + c * 16 + r / 2] |= (byte) (code << ((r & 1) * 4));
    }

    static void q4KRow(byte[] t, int base, int r, short bigS, short bigM) {
        putShort(t, base + Q4_K_S + 2 * r, bigS);
        putShort(t, base + Q4_K_M + 2 * r, bigM);
    }

    static short bf16(float v) {
        return Floats.floatToBf16(v);
    }

    private static void putShort(byte[] t, int at, short v) {
        t[at] = (byte) v;
        t[at + 1] = (byte) (v >>> 8);
    }
}
