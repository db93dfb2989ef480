package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Floats;

import java.nio.ByteBuffer;

/**
 * Encodes floats into GGUF block formats, with llama.cpp's reference rounding: F32, F16, Q8_0 (f16 d, 32 int8),
 * Q4_0 (f16 d, 16 bytes of nibbles, offset 8) and Q4_1 (f16 d, f16 m, 16 bytes of nibbles). In a 4-bit block, byte j
 * holds element j in its low nibble and element j + 16 in its high nibble.
 */
public final class GgufBlockEncoder {
    private GgufBlockEncoder() {
    }

    /** The types this encoder writes. */
    public static boolean supports(DType type) {
        return switch (type) {
            case F32, F16, Q8_0, Q4_0, Q4_1 -> true;
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
            default -> throw new IllegalArgumentException("cannot encode " + type);
        }
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
