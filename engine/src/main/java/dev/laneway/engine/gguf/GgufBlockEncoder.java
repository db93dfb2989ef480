package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Floats;

import java.nio.ByteBuffer;

/**
 * Encodes floats into GGUF block formats, with llama.cpp's reference rounding: F32, F16, Q8_0 (f16 d, 32 int8),
 * Q4_0 (f16 d, 16 bytes of nibbles, offset 8) and Q4_1 (f16 d, f16 m, 16 bytes of nibbles). In a 4-bit block, byte j
 * holds element j in its low nibble and element j + 16 in its high nibble. Q4_K (super-blocks of 256) is encoded
 * plainly, each 32-element sub-block's range split in 15 steps, not searched for the least error as llama.cpp's
 * quantizer does: valid blocks of a random model, not a way to quantize a trained one.
 */
public final class GgufBlockEncoder {
    private GgufBlockEncoder() {
    }

    /** The types this encoder writes. */
    public static boolean supports(DType type) {
        return switch (type) {
            case F32, F16, Q8_0, Q4_0, Q4_1, Q4_K -> true;
            default -> false;
        };
    }

    /** Appends {@code n} elements of {@code x} from {@code off} (a whole number of blocks) to {@code out}. */
    public static void encode(DType type, float[] x, int off, int n, ByteBuffer out) {
        switch (type) {
            case F32 -> {
                for (int i = 0; i < n; i++) {
                    out.putFloat(x[off + i]);
                }
            }
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    out.putShort(Floats.floatToF16(x[off + i]));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < n; b += 32) {
                    q8_0(x, off + b, out);
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < n; b += 32) {
                    q4_0(x, off + b, out);
                }
            }
            case Q4_1 -> {
                for (int b = 0; b < n; b += 32) {
                    q4_1(x, off + b, out);
                }
            }
            case Q4_K -> {
                for (int b = 0; b < n; b += 256) {
                    q4K(x, off + b, out);
                }
            }
            default -> throw new IllegalArgumentException("cannot encode " + type);
        }
    }

    /**
     * {@code struct { half d, dmin; u8 scales[12]; u8 qs[128]; }}: sub-block j's 6-bit scale sc and min m pack into
     * scales as GgmlBlocks#scaleMinK4 reads them, and element l of sub-blocks 2k and 2k + 1 share byte 32k + l of qs
     * (low and high nibble); x = d·sc·q − dmin·m.
     */
    private static void q4K(float[] x, int o, ByteBuffer out) {
        float[] step = new float[8];
        float[] floor = new float[8];
        float maxStep = 0;
        float maxFloor = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0;
            float hi = 0;
            for (int l = 0; l < 32; l++) {
                lo = Math.min(lo, x[o + 32 * j + l]);
                hi = Math.max(hi, x[o + 32 * j + l]);
            }
            step[j] = (hi - lo) / 15f;
            floor[j] = -lo;
            maxStep = Math.max(maxStep, step[j]);
            maxFloor = Math.max(maxFloor, floor[j]);
        }
        short dBits = Floats.floatToF16(maxStep / 63f);
        short dminBits = Floats.floatToF16(maxFloor / 63f);
        float d = Floats.f16ToFloat(dBits);
        float dmin = Floats.f16ToFloat(dminBits);
        int[] sc = new int[8];
        int[] m = new int[8];
        for (int j = 0; j < 8; j++) {
            sc[j] = d > 0 ? Math.min(63, Math.round(step[j] / d)) : 0;
            m[j] = dmin > 0 ? Math.min(63, Math.round(floor[j] / dmin)) : 0;
        }
        out.putShort(dBits);
        out.putShort(dminBits);
        for (int j = 0; j < 4; j++) {
            out.put((byte) ((sc[j] & 63) | (sc[j + 4] >> 4) << 6));
        }
        for (int j = 0; j < 4; j++) {
            out.put((byte) ((m[j] & 63) | (m[j + 4] >> 4) << 6));
        }
        for (int j = 4; j < 8; j++) {
            out.put((byte) ((sc[j] & 15) | (m[j] & 15) << 4));
        }
        for (int k = 0; k < 4; k++) {
            for (int l = 0; l < 32; l++) {
                out.put((byte) (code(x[o + 64 * k + l], d * sc[2 * k], dmin * m[2 * k])
                        | code(x[o + 64 * k + 32 + l], d * sc[2 * k + 1], dmin * m[2 * k + 1]) << 4));
            }
        }
    }

    /** The 4-bit code nearest x for a sub-block of step {@code scale} starting at {@code -min}. */
    private static int code(float x, float scale, float min) {
        return scale > 0 ? Math.max(0, Math.min(15, Math.round((x + min) / scale))) : 0;
    }

    private static void q8_0(float[] x, int o, ByteBuffer out) {
        float amax = 0;
        for (int i = 0; i < 32; i++) {
            amax = Math.max(amax, Math.abs(x[o + i]));
        }
        float d = amax / 127f;
        float id = d != 0 ? 1f / d : 0f;
        out.putShort(Floats.floatToF16(d));
        for (int i = 0; i < 32; i++) {
            out.put((byte) Math.round(x[o + i] * id));
        }
    }

    private static void q4_0(float[] x, int o, ByteBuffer out) {
        float amax = 0;
        float max = 0;
        for (int i = 0; i < 32; i++) {
            if (Math.abs(x[o + i]) > amax) {
                amax = Math.abs(x[o + i]);
                max = x[o + i];
            }
        }
        float d = max / -8f;
        float id = d != 0 ? 1f / d : 0f;
        out.putShort(Floats.floatToF16(d));
        for (int j = 0; j < 16; j++) {
            int lo = Math.min(15, (int) (x[o + j] * id + 8.5f));
            int hi = Math.min(15, (int) (x[o + j + 16] * id + 8.5f));
            out.put((byte) (lo | (hi << 4)));
        }
    }

    private static void q4_1(float[] x, int o, ByteBuffer out) {
        float min = Float.POSITIVE_INFINITY;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < 32; i++) {
            min = Math.min(min, x[o + i]);
            max = Math.max(max, x[o + i]);
        }
        float d = (max - min) / 15f;
        float id = d != 0 ? 1f / d : 0f;
        out.putShort(Floats.floatToF16(d));
        out.putShort(Floats.floatToF16(min));
        for (int j = 0; j < 16; j++) {
            int lo = Math.min(15, (int) ((x[o + j] - min) * id + 0.5f));
            int hi = Math.min(15, (int) ((x[o + j + 16] - min) * id + 0.5f));
            out.put((byte) (lo | (hi << 4)));
        }
    }
}
