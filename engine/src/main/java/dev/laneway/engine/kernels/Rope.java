package dev.laneway.engine.kernels;

/**
 * Rotary position embedding tables: {@code cos} and {@code sin} of position · frequency(i) for every position and
 * pair i (θ^(−2i/rotaryDim) unless the model scales it, see {@link RopeFrequencies}), and which elements form the
 * pairs.
 *
 * <p>{@link Style#INTERLEAVED} rotates pairs (2i, 2i+1), as GGUF llama models store their q/k weights;
 * {@link Style#HALVES} rotates pairs (i, i + headDim/2), the Hugging Face {@code rotate_half} convention (and
 * llama.cpp's NEOX mode).
 *
 * @param style     which elements pair up
 * @param headDim   elements per head
 * @param rotaryDim elements rotated per head (headDim unless partial rotary)
 * @param cos       [position][rotaryDim / 2]
 * @param sin       [position][rotaryDim / 2]
 */
public record Rope(Style style, int headDim, int rotaryDim, float[] cos, float[] sin) {

    /** Which elements of a head form the rotated pairs. */
    public enum Style { INTERLEAVED, HALVES }

    /** Tables for {@code positions} positions of plain RoPE with base {@code theta}. */
    public static Rope of(Style style, int headDim, int rotaryDim, int positions, double theta) {
        return of(style, headDim, rotaryDim, positions, RopeFrequencies.plain(theta, rotaryDim));
    }

    /** Tables for {@code positions} positions at the given per-pair frequencies. */
    public static Rope of(Style style, int headDim, int rotaryDim, int positions, RopeFrequencies frequencies) {
        RopeFrequencies.requireMatching(frequencies, rotaryDim);
        int half = rotaryDim / 2;
        float[] cos = new float[positions * half];
        float[] sin = new float[positions * half];
        for (int p = 0; p < positions; p++) {
            for (int i = 0; i < half; i++) {
                double angle = p * frequencies.at(i);
                cos[p * half + i] = (float) (Math.cos(angle) * frequencies.magnitude());
                sin[p * half + i] = (float) (Math.sin(angle) * frequencies.magnitude());
            }
        }
        return new Rope(style, headDim, rotaryDim, cos, sin);
    }

    /** Positions the tables cover. */
    public int positions() {
        return cos.length / (rotaryDim / 2);
    }
}
