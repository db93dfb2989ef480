package dev.laneway.engine.kernels;

/**
 * The orthonormal Walsh–Hadamard rotation that llama.cpp applies to queries, keys and values around an eight-bit KV
 * cache: it spreads a head's few large elements over all of its elements, so that a block's step, set by its largest,
 * loses less of the rest. The rotation is its own inverse. A head is rotated in pieces of {@link #keys} elements for
 * queries and keys and of {@link #VALUES} for values (llama.cpp's sizes), and not at all when it is not a whole number
 * of 64 elements.
 */
public final class Hadamard {
    /** The piece a value row is rotated in. */
    public static final int VALUES = 64;

    private Hadamard() {
    }

    /** The piece a head of {@code headDim} is rotated in for queries and keys: its largest power-of-two divisor. */
    public static int keys(int headDim) {
        return headDim % VALUES == 0 ? Integer.lowestOneBit(headDim) : 0;
    }

    /** The piece for values: 64 when the head is a whole number of them, else 0 (none). */
    public static int values(int headDim) {
        return headDim % VALUES == 0 ? VALUES : 0;
    }

    /**
     * Rotates {@code x[from .. from + n]} in place, each piece of {@code piece} elements on its own (0: none): the
     * butterflies of the Sylvester order, then the scale 1/√piece, as the native kernels do it.
     */
    public static void rotate(float[] x, int from, int n, int piece) {
        if (piece == 0) {
            return;
        }
        float scale = (float) (1 / Math.sqrt(piece));
        for (int p = from; p < from + n; p += piece) {
            for (int h = 1; h < piece; h *= 2) {
                for (int i = p; i < p + piece; i += 2 * h) {
                    for (int j = i; j < i + h; j++) {
                        float a = x[j];
                        float b = x[j + h];
                        x[j] = a + b;
                        x[j + h] = a - b;
                    }
                }
            }
            for (int i = p; i < p + piece; i++) {
                x[i] *= scale;
            }
        }
    }
}
