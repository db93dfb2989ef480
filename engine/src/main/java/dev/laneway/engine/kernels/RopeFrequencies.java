package dev.laneway.engine.kernels;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The angle each rotated pair of a head turns per position: θ^(−2i/rotaryDim) for pair i, changed by the model's RoPE
 * scaling, and the magnitude the rotation scales q and k by (1 but for YaRN). A model's {@code rope_scaling} ({@code
 * linear}, {@code llama3}, {@code yarn}, {@code longrope}) and a GGUF {@code rope_freqs} tensor (per-pair factors that
 * divide the frequencies, as llama.cpp applies them) are read here; any other scaling type or parameter is refused by
 * name, because computing plain RoPE for it would give every position the wrong angle.
 *
 * @param perPosition angle per position of each pair, {@code rotaryDim / 2} of them
 * @param magnitude   the factor cos and sin are multiplied by
 */
public record RopeFrequencies(double[] perPosition, double magnitude) {
    /** The name of the per-pair factors tensor, in GGUF files and in containers alike. */
    public static final String FACTORS_TENSOR = "rope_freqs.weight";

    public RopeFrequencies {
        perPosition = perPosition.clone();
    }

    public RopeFrequencies(double[] perPosition) {
        this(perPosition, 1.0);
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
     * @param factors       the per-pair factors of a {@code rope_freqs} tensor, if the model has one
     * @param contextLength the positions served: longrope takes its long factors beyond its original context
     * @throws IllegalArgumentException naming the scaling type or field that cannot be applied
     */
    public static RopeFrequencies of(double theta, int rotaryDim, Map<String, Object> ropeScaling,
                                     Optional<float[]> factors, int contextLength) {
        double[] f = plain(theta, rotaryDim).perPosition;
        double magnitude = 1.0;
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
            case "yarn" -> magnitude = yarn(f, theta, rotaryDim, ropeScaling);
            case "longrope", "su" -> magnitude = longrope(f, ropeScaling, contextLength);
            default -> throw new IllegalArgumentException("rope_scaling type \"" + type
                    + "\" is not supported (supported: linear, llama3, yarn, longrope)");
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
        return new RopeFrequencies(f, magnitude);
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

    /** The YaRN parameters Laneway computes; any other key of a yarn rope_scaling is refused by name. */
    private static final java.util.Set<String> YARN_KEYS = java.util.Set.of("rope_type", "type", "factor",
            "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "truncate");

    /**
     * YaRN: pair i turns at a blend of its own frequency (extrapolated) and its frequency divided by {@code factor}
     * (interpolated); pairs that complete more than {@code beta_fast} turns over the original context keep theirs,
     * those completing fewer than {@code beta_slow} are interpolated fully, linearly between, with the corrections
     * rounded out to whole pairs. q and k are scaled by {@code attention_factor}, by default 0.1·ln(factor) + 1, so
     * attention logits grow by its square.
     *
     * @return the magnitude
     */
    private static double yarn(double[] f, double theta, int rotaryDim, Map<String, Object> s) {
        for (String key : s.keySet()) {
            if (!YARN_KEYS.contains(key)) {
                throw new IllegalArgumentException("rope_scaling." + key + " of a yarn scaling is not supported"
                        + " (supported: factor, original_max_position_embeddings, beta_fast, beta_slow,"
                        + " attention_factor, truncate: true)");
            }
        }
        if (s.containsKey("truncate") && !Boolean.TRUE.equals(s.get("truncate"))) {
            throw new IllegalArgumentException("rope_scaling.truncate " + s.get("truncate") + " of a yarn scaling is"
                    + " not supported (the correction range is rounded out to whole pairs)");
        }
        double factor = positive(s, "factor");
        double original = positive(s, "original_max_position_embeddings");
        double betaFast = s.containsKey("beta_fast") ? positive(s, "beta_fast") : 32;
        double betaSlow = s.containsKey("beta_slow") ? positive(s, "beta_slow") : 1;
        double low = Math.max(0, Math.floor(correctionPair(rotaryDim, original, betaFast, theta)));
        double high = Math.min(rotaryDim - 1, Math.ceil(correctionPair(rotaryDim, original, betaSlow, theta)));
        for (int i = 0; i < f.length; i++) {
            double ramp = Math.min(1, Math.max(0, (i - low) / Math.max(0.001, high - low)));
            double extrapolated = 1 - ramp;
            f[i] = f[i] / factor * (1 - extrapolated) + f[i] * extrapolated;
        }
        if (s.containsKey("attention_factor")) {
            return positive(s, "attention_factor");
        }
        return yarnMagnitude(factor);
    }

    /** The longrope parameters Laneway computes; any other key is refused by name. */
    private static final java.util.Set<String> LONGROPE_KEYS = java.util.Set.of("rope_type", "type", "short_factor",
            "long_factor", "original_max_position_embeddings", "factor", "attention_factor");

    /**
     * Phi-3's longrope: each pair's frequency divided by its factor, the {@code long_factor}s when the context served
     * exceeds {@code original_max_position_embeddings} (as llama.cpp chooses, once per context), the
     * {@code short_factor}s otherwise. q and k are scaled by {@code attention_factor}, by default
     * √(1 + ln(factor) / ln(original)) for a context extended {@code factor} times.
     *
     * @return the magnitude
     */
    private static double longrope(double[] f, Map<String, Object> s, int contextLength) {
        for (String key : s.keySet()) {
            if (!LONGROPE_KEYS.contains(key)) {
                throw new IllegalArgumentException("rope_scaling." + key + " of a longrope scaling is not supported"
                        + " (supported: short_factor, long_factor, original_max_position_embeddings, factor,"
                        + " attention_factor)");
            }
        }
        double original = positive(s, "original_max_position_embeddings");
        double[] shortFactors = factorList(s, "short_factor", f.length);
        double[] longFactors = factorList(s, "long_factor", f.length);
        double[] chosen = contextLength > original ? longFactors : shortFactors;
        for (int i = 0; i < f.length; i++) {
            f[i] /= chosen[i];
        }
        if (s.containsKey("attention_factor")) {
            return positive(s, "attention_factor");
        }
        double factor = s.containsKey("factor") ? positive(s, "factor") : 1;
        return factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
    }

    private static double[] factorList(Map<String, Object> s, String key, int pairs) {
        if (!(s.get(key) instanceof java.util.List<?> list) || list.size() != pairs) {
            throw new IllegalArgumentException("rope_scaling." + key + " must list " + pairs
                    + " factors (one per rotated pair), got " + s.get(key));
        }
        double[] d = new double[pairs];
        for (int i = 0; i < pairs; i++) {
            if (!(list.get(i) instanceof Number n) || !(n.doubleValue() > 0) || Double.isInfinite(n.doubleValue())) {
                throw new IllegalArgumentException("rope_scaling." + key + "[" + i + "] is " + list.get(i)
                        + ", not a positive factor");
            }
            d[i] = n.doubleValue();
        }
        return d;
    }

    /** YaRN's default magnitude for a context extended {@code factor} times. */
    public static double yarnMagnitude(double factor) {
        return factor <= 1 ? 1 : 0.1 * Math.log(factor) + 1;
    }

    /** The pair whose wavelength fits {@code turns} times into the original context. */
    private static double correctionPair(int rotaryDim, double original, double turns, double theta) {
        return rotaryDim * Math.log(original / (turns * 2 * Math.PI)) / (2 * Math.log(theta));
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
        return o instanceof RopeFrequencies r && Arrays.equals(perPosition, r.perPosition)
                && magnitude == r.magnitude;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(perPosition) * 31 + Double.hashCode(magnitude);
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
