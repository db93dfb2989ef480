package dev.laneway.engine.kernels;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The angle each rotated pair of a head turns per position: θ^(−2i/rotaryDim) for pair i, changed by the model's
 * RoPE scaling. A model's {@code rope_scaling} ({@code linear}, {@code llama3}) and a GGUF {@code rope_freqs}
 * tensor (per-pair factors that divide the frequencies, as llama.cpp applies them) are read here; any other scaling
 * type is refused by name, because computing plain RoPE for it would give every position the wrong angle.
 *
 * @param perPosition angle per position of each pair, {@code rotaryDim / 2} of them
 */
public record RopeFrequencies(double[] perPosition) {
    /** The name of the per-pair factors tensor, in GGUF files and in containers alike. */
    public static final String FACTORS_TENSOR = "rope_freqs.weight";

    public RopeFrequencies {
        perPosition = perPosition.clone();
    }

    /** Plain RoPE with base {@code theta} over {@code rotaryDim} elements. */
    public static RopeFrequencies plain(double theta, int rotaryDim) {
        if (rotaryDim < 2 || rotaryDim % 2 != 0) {
            throw new IllegalArgumentException("the rotary dimension must be even and positive, got " + rotaryDim);
        }
        double[] f = new double[rotaryDim / 2];
        for (int i = 0; i < f.length; i++) {
            f[i] = 1.0 / Math.pow(theta, (2.0 * i) / rotaryDim);
        }
        return new RopeFrequencies(f);
    }

    /**
     * The frequencies of a model.
     *
     * @param ropeScaling the {@code rope_scaling} object of its config ({@code rope_type} or, in older configs,
     *                    {@code type}), empty for none
     * @param factors     the per-pair factors of a {@code rope_freqs} tensor, if the model has one
     * @throws IllegalArgumentException naming the scaling type or field that cannot be applied
     */
    public static RopeFrequencies of(double theta, int rotaryDim, Map<String, Object> ropeScaling,
                                     Optional<float[]> factors) {
        double[] f = plain(theta, rotaryDim).perPosition;
        String type = scalingType(ropeScaling);
        switch (type) {
            case "none", "default" -> { }
            case "linear" -> {
                double factor = positive(ropeScaling, "factor");
                for (int i = 0; i < f.length; i++) {
                    f[i] /= factor;
                }
            }
            case "llama3" -> llama3(f, ropeScaling);
            default -> throw new IllegalArgumentException("rope_scaling type \"" + type
                    + "\" is not supported (supported: linear, llama3)");
        }
        if (factors.isPresent()) {
            float[] d = factors.get();
            if (d.length != f.length) {
                throw new IllegalArgumentException(FACTORS_TENSOR + " has " + d.length + " factors, expected "
                        + f.length + " (one per rotated pair)");
            }
            for (int i = 0; i < f.length; i++) {
                if (!(d[i] > 0) || Float.isInfinite(d[i])) {
                    throw new IllegalArgumentException(FACTORS_TENSOR + "[" + i + "] is " + d[i]
                            + ", not a positive factor");
                }
                f[i] /= d[i];
            }
        }
        return new RopeFrequencies(f);
    }

    /** The scaling type a {@code rope_scaling} object names, {@code "none"} when it is empty. */
    public static String scalingType(Map<String, Object> ropeScaling) {
        if (ropeScaling.isEmpty()) {
            return "none";
        }
        Object type = ropeScaling.getOrDefault("rope_type", ropeScaling.get("type"));
        if (!(type instanceof String s)) {
            throw new IllegalArgumentException("rope_scaling has no rope_type");
        }
        return s;
    }

    /**
     * Llama 3.1's scaling: wavelengths longer than the original context divided by {@code factor}, shorter than
     * {@code original / high_freq_factor} kept, those between blended smoothly.
     */
    private static void llama3(double[] f, Map<String, Object> s) {
        double factor = positive(s, "factor");
        double low = positive(s, "low_freq_factor");
        double high = positive(s, "high_freq_factor");
        double original = positive(s, "original_max_position_embeddings");
        if (!(high > low)) {
            throw new IllegalArgumentException("rope_scaling.high_freq_factor " + high
                    + " must exceed low_freq_factor " + low);
        }
        double lowFreqWavelength = original / low;
        double highFreqWavelength = original / high;
        for (int i = 0; i < f.length; i++) {
            double wavelength = 2 * Math.PI / f[i];
            if (wavelength > lowFreqWavelength) {
                f[i] /= factor;
            } else if (wavelength >= highFreqWavelength) {
                double smooth = (original / wavelength - low) / (high - low);
                f[i] = (1 - smooth) * f[i] / factor + smooth * f[i];
            }
        }
    }

    private static double positive(Map<String, Object> s, String key) {
        Object v = s.get(key);
        if (!(v instanceof Number n) || !(n.doubleValue() > 0) || Double.isInfinite(n.doubleValue())) {
            throw new IllegalArgumentException("rope_scaling." + key + " must be a positive number, got " + v);
        }
        return n.doubleValue();
    }

    /** Pairs per head. */
    public int pairs() {
        return perPosition.length;
    }

    /** The angle pair {@code i} turns per position. */
    public double at(int i) {
        return perPosition[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RopeFrequencies r && Arrays.equals(perPosition, r.perPosition);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(perPosition);
    }

    @Override
    public String toString() {
        return "RopeFrequencies" + Arrays.toString(perPosition);
    }

    static RopeFrequencies requireMatching(RopeFrequencies f, int rotaryDim) {
        Objects.requireNonNull(f, "frequencies");
        if (f.pairs() != rotaryDim / 2) {
            throw new IllegalArgumentException("frequencies for " + 2 * f.pairs() + " rotated elements, not "
                    + rotaryDim);
        }
        return f;
    }
}
