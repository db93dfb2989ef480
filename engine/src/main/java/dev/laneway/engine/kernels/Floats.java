package dev.laneway.engine.kernels;

/** Conversions between float and the 16-bit float formats. */
public final class Floats {
    private Floats() {
    }

    /** bfloat16 bits to float: the upper half of the float's bits. */
    public static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** Float to bfloat16 bits, rounding to nearest even (NaN stays NaN). */
    public static short floatToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    /** Every half-precision value as a float, indexed by its bits: a lookup beats the bit twiddling in hot loops. */
    private static final float[] HALF = new float[1 << 16];

    static {
        for (int i = 0; i < HALF.length; i++) {
            HALF[i] = decodeF16((short) i);
        }
    }

    /** IEEE half-precision bits to float. */
    public static float f16ToFloat(short bits) {
        return HALF[bits & 0xffff];
    }

    private static float decodeF16(short bits) {
        int h = bits & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exp = (h >>> 10) & 0x1f;
        int mant = h & 0x3ff;
        if (exp == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
        }
        if (exp == 0) {
            if (mant == 0) {
                return Float.intBitsToFloat(sign);
            }
            // Subnormal: value = mant · 2^-24.
            float v = mant * 0x1p-24f;
            return sign != 0 ? -v : v;
        }
        return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
    }

    /** Float to IEEE half-precision bits, rounding to nearest even. */
    public static short floatToF16(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int exp = (bits >>> 23) & 0xff;
        int mant = bits & 0x7fffff;
        if (exp == 0xff) {
            return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
        }
        int e = exp - 127 + 15;
        if (e >= 0x1f) {
            return (short) (sign | 0x7c00);
        }
        if (e <= 0) {
            if (e < -10) {
                return (short) sign;
            }
            mant |= 0x800000;
            int shift = 14 - e;
            int half = mant >>> shift;
            int rem = mant & ((1 << shift) - 1);
            int mid = 1 << (shift - 1);
            if (rem > mid || (rem == mid && (half & 1) != 0)) {
                half++;
            }
            return (short) (sign | half);
        }
        int half = (e << 10) | (mant >>> 13);
        int rem = mant & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (half & 1) != 0)) {
            half++;
        }
        return (short) (sign | half);
    }
}
