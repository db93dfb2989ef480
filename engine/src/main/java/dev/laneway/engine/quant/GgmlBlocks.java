package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Floats;

/**
 * Decodes ggml's quantized blocks to floats, one block at a time, from a byte array. The bit layouts are those of
 * ggml's {@code block_q4_0}, {@code block_q4_K}, ... structs, quoted above each decoder; all multi-byte fields are
 * little-endian, {@code ggml_half} is IEEE half precision.
 */
final class GgmlBlocks {
    private GgmlBlocks() {
    }

    /** Whether {@link #decode} knows this block type. */
    static boolean supports(DType type) {
        return switch (type) {
            case Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K -> true;
            default -> false;
        };
    }

    /** Decodes {@code blocks} consecutive blocks starting at {@code src[at]} into {@code out[outAt ..]}. */
    static void decode(DType type, byte[] src, int at, int blocks, float[] out, int outAt) {
        int step = type.blockBytes();
        int n = type.blockSize();
        for (int b = 0; b < blocks; b++) {
            int o = at + b * step;
            int y = outAt + b * n;
            switch (type) {
                case Q4_0 -> q4_0(src, o, out, y);
                case Q4_1 -> q4_1(src, o, out, y);
                case Q5_0 -> q5_0(src, o, out, y);
                case Q5_1 -> q5_1(src, o, out, y);
                case Q8_0 -> q8_0(src, o, out, y);
                case Q2_K -> q2K(src, o, out, y);
                case Q3_K -> q3K(src, o, out, y);
                case Q4_K -> q4K(src, o, out, y);
                case Q5_K -> q5K(src, o, out, y);
                case Q6_K -> q6K(src, o, out, y);
                case Q8_K -> q8K(src, o, out, y);
                default -> throw new IllegalArgumentException("no block decoder for " + type);
            }
        }
    }

    /** {@code struct { half d; u8 qs[16]; }}: x[j] = (lo(qs[j]) − 8)·d, x[j+16] = (hi(qs[j]) − 8)·d. */
    static void q4_0(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        for (int j = 0; j < 16; j++) {
            int q = b[o + 2 + j] & 0xff;
            y[yo + j] = ((q & 0x0f) - 8) * d;
            y[yo + j + 16] = ((q >>> 4) - 8) * d;
        }
    }

    /** {@code struct { half d, m; u8 qs[16]; }}: x = q·d + m, nibbles as in Q4_0. */
    static void q4_1(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        float m = f16(b, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = b[o + 4 + j] & 0xff;
            y[yo + j] = (q & 0x0f) * d + m;
            y[yo + j + 16] = (q >>> 4) * d + m;
        }
    }

    /** {@code struct { half d; u8 qh[4]; u8 qs[16]; }}: bit j of qh is bit 4 of element j; x = (q − 16)·d. */
    static void q5_0(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        int qh = i32(b, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = b[o + 6 + j] & 0xff;
            int h0 = ((qh >>> j) & 1) << 4;
            int h1 = ((qh >>> (j + 16)) & 1) << 4;
            y[yo + j] = (((q & 0x0f) | h0) - 16) * d;
            y[yo + j + 16] = (((q >>> 4) | h1) - 16) * d;
        }
    }

    /** {@code struct { half d, m; u8 qh[4]; u8 qs[16]; }}: x = q·d + m, 5-bit q as in Q5_0. */
    static void q5_1(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        float m = f16(b, o + 2);
        int qh = i32(b, o + 4);
        for (int j = 0; j < 16; j++) {
            int q = b[o + 8 + j] & 0xff;
            int h0 = ((qh >>> j) & 1) << 4;
            int h1 = ((qh >>> (j + 16)) & 1) << 4;
            y[yo + j] = ((q & 0x0f) | h0) * d + m;
            y[yo + j + 16] = ((q >>> 4) | h1) * d + m;
        }
    }

    /** {@code struct { half d; i8 qs[32]; }}: x = q·d. */
    static void q8_0(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        for (int j = 0; j < 32; j++) {
            y[yo + j] = b[o + 2 + j] * d;
        }
    }

    /**
     * {@code struct { u8 scales[16]; u8 qs[64]; half d, dmin; }}: 16 groups of 16, group scale d·(sc &amp; 15) and
     * min dmin·(sc &gt;&gt; 4); each 128-element half reads 32 bytes of qs four times, 2 bits at a time.
     */
    static void q2K(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o + 80);
        float dmin = f16(b, o + 82);
        int qs = o + 16;
        int group = 0;
        for (int half = 0; half < 2; half++) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    int sc = b[o + group++] & 0xff;
                    float dl = d * (sc & 0x0f);
                    float ml = dmin * (sc >>> 4);
                    for (int l = 0; l < 16; l++) {
                        int q = (b[qs + part * 16 + l] >>> shift) & 3;
                        y[yo++] = dl * q - ml;
                    }
                }
            }
            qs += 32;
        }
    }

    /**
     * {@code struct { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }}: 16 groups of 16 with 6-bit signed scales
     * (offset 32) packed in 12 bytes; 2 low bits from qs, and 4 is subtracted where the hmask bit is clear.
     */
    static void q3K(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o + 108);
        int[] scales = q3KScales(b, o + 96);
        int qs = o + 32;
        int group = 0;
        int mask = 1;
        for (int half = 0; half < 2; half++) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    float dl = d * (scales[group++] - 32);
                    for (int l = 0; l < 16; l++) {
                        int i = part * 16 + l;
                        int q = (b[qs + i] >>> shift) & 3;
                        int high = (b[o + i] & mask) != 0 ? 0 : 4;
                        y[yo++] = dl * (q - high);
                    }
                }
                mask <<= 1;
            }
            qs += 32;
        }
    }

    /** The 16 six-bit scales of a Q3_K block: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11. */
    private static int[] q3KScales(byte[] b, int o) {
        int[] s = new int[16];
        for (int j = 0; j < 16; j++) {
            int low = (b[o + (j % 8)] >>> (j < 8 ? 0 : 4)) & 0x0f;
            int high = (b[o + 8 + (j % 4)] >>> (2 * (j / 4))) & 3;
            s[j] = low | (high << 4);
        }
        return s;
    }

    /**
     * {@code struct { half d, dmin; u8 scales[12]; u8 qs[128]; }}: 8 sub-blocks of 32 with 6-bit scale sc and min m
     * ({@link #scaleMinK4}); x = d·sc·q − dmin·m. Sub-blocks 2k and 2k+1 are the low and high nibbles of qs[32k ..].
     */
    static void q4K(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        float dmin = f16(b, o + 2);
        for (int sub = 0; sub < 8; sub++) {
            int sm = scaleMinK4(b, o + 4, sub);
            float dl = d * (sm & 0xff);
            float ml = dmin * (sm >>> 8);
            int qs = o + 16 + (sub / 2) * 32;
            int shift = (sub % 2) * 4;
            for (int l = 0; l < 32; l++) {
                y[yo + sub * 32 + l] = dl * ((b[qs + l] >>> shift) & 0x0f) - ml;
            }
        }
    }

    /**
     * {@code struct { half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }}: as Q4_K, with bit {@code sub} of
     * qh[l] as the fifth bit of element l of sub-block {@code sub}.
     */
    static void q5K(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o);
        float dmin = f16(b, o + 2);
        for (int sub = 0; sub < 8; sub++) {
            int sm = scaleMinK4(b, o + 4, sub);
            float dl = d * (sm & 0xff);
            float ml = dmin * (sm >>> 8);
            int qs = o + 48 + (sub / 2) * 32;
            int shift = (sub % 2) * 4;
            for (int l = 0; l < 32; l++) {
                int q = ((b[qs + l] >>> shift) & 0x0f) | (((b[o + 16 + l] >>> sub) & 1) << 4);
                y[yo + sub * 32 + l] = dl * q - ml;
            }
        }
    }

    /**
     * {@code struct { u8 ql[128]; u8 qh[64]; i8 scales[16]; half d; }}: 6-bit q (low 4 from ql, high 2 from qh)
     * minus 32, times d·scale, 16 groups of 16.
     */
    static void q6K(byte[] b, int o, float[] y, int yo) {
        float d = f16(b, o + 208);
        for (int half = 0; half < 2; half++) {
            int ql = o + half * 64;
            int qh = o + 128 + half * 32;
            int sc = o + 192 + half * 8;
            int base = yo + half * 128;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int h = b[qh + l] & 0xff;
                int q1 = ((b[ql + l] & 0x0f) | ((h & 3) << 4)) - 32;
                int q2 = ((b[ql + l + 32] & 0x0f) | (((h >>> 2) & 3) << 4)) - 32;
                int q3 = (((b[ql + l] & 0xff) >>> 4) | (((h >>> 4) & 3) << 4)) - 32;
                int q4 = (((b[ql + l + 32] & 0xff) >>> 4) | (((h >>> 6) & 3) << 4)) - 32;
                y[base + l] = d * b[sc + is] * q1;
                y[base + l + 32] = d * b[sc + is + 2] * q2;
                y[base + l + 64] = d * b[sc + is + 4] * q3;
                y[base + l + 96] = d * b[sc + is + 6] * q4;
            }
        }
    }

    /** {@code struct { float d; i8 qs[256]; i16 bsums[16]; }}: x = q·d. */
    static void q8K(byte[] b, int o, float[] y, int yo) {
        float d = Float.intBitsToFloat(i32(b, o));
        for (int j = 0; j < 256; j++) {
            y[yo + j] = b[o + 4 + j] * d;
        }
    }

    /**
     * The 6-bit scale and min of sub-block {@code j} of a Q4_K/Q5_K block's 12 packed bytes at {@code s}: for j &lt; 4
     * the low 6 bits of bytes j and j+4; otherwise 4 bits from byte j+4 and the top 2 bits of bytes j−4 and j.
     *
     * @return scale | min &lt;&lt; 8
     */
    static int scaleMinK4(byte[] b, int s, int j) {
        int sc;
        int m;
        if (j < 4) {
            sc = b[s + j] & 63;
            m = b[s + j + 4] & 63;
        } else {
            sc = (b[s + j + 4] & 0x0f) | (((b[s + j - 4] & 0xff) >>> 6) << 4);
            m = ((b[s + j + 4] & 0xff) >>> 4) | (((b[s + j] & 0xff) >>> 6) << 4);
        }
        return sc | (m << 8);
    }

    static float f16(byte[] b, int o) {
        return Floats.f16ToFloat((short) ((b[o] & 0xff) | (b[o + 1] << 8)));
    }

    static int i32(byte[] b, int o) {
        return (b[o] & 0xff) | (b[o + 1] & 0xff) << 8 | (b[o + 2] & 0xff) << 16 | (b[o + 3] & 0xff) << 24;
    }
}
