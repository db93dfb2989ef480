package dev.laneway.engine.kernels;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RopeFrequenciesTest {
    private static final double THETA = 500_000;
    private static final int HEAD_DIM = 64;
    /** The positions served, for the scalings that depend on it (longrope). */
    private static final int CONTEXT = 4096;

    private static double plain(int i) {
        return Math.pow(THETA, -2.0 * i / HEAD_DIM);
    }

    @Test
    void plainRopeTurnsPairIByThetaToTheMinusTwoIOverD() {
        RopeFrequencies f = RopeFrequencies.of(THETA, HEAD_DIM, Map.of(), Optional.empty(), CONTEXT);
        assertEquals(32, f.pairs());
        for (int i = 0; i < f.pairs(); i++) {
            assertEquals(plain(i), f.at(i), 1e-15 * plain(0));
        }
        assertEquals(f, RopeFrequencies.of(THETA, HEAD_DIM, Map.of("rope_type", "default"), Optional.empty(), CONTEXT));
    }

    @Test
    void linearScalingDividesEveryFrequency() {
        RopeFrequencies f = RopeFrequencies.of(THETA, HEAD_DIM, Map.of("type", "linear", "factor", 4.0),
                Optional.empty(), CONTEXT);
        for (int i = 0; i < f.pairs(); i++) {
            assertEquals(plain(i) / 4, f.at(i), 1e-15);
        }
    }

    /**
     * Llama 3.1's scaling against the factors llama.cpp's converter writes into {@code rope_freqs}: 1 for short
     * wavelengths, {@code factor} for long ones, {@code 1 / ((1 - s) / factor + s)} between.
     */
    @Test
    void llama3ScalingEqualsTheFactorsLlamaCppWrites() {
        double factor = 32;
        double low = 1;
        double high = 4;
        double original = 8192;
        RopeFrequencies f = RopeFrequencies.of(THETA, HEAD_DIM, Map.of("rope_type", "llama3", "factor", factor,
                "low_freq_factor", low, "high_freq_factor", high, "original_max_position_embeddings", 8192),
                Optional.empty(), CONTEXT);
        int kept = 0;
        int divided = 0;
        int blended = 0;
        for (int i = 0; i < f.pairs(); i++) {
            double wavelength = 2 * Math.PI / plain(i);
            double expectedFactor;
            if (wavelength < original / high) {
                expectedFactor = 1;
                kept++;
            } else if (wavelength > original / low) {
                expectedFactor = factor;
                divided++;
            } else {
                double smooth = (original / wavelength - low) / (high - low);
                expectedFactor = 1 / ((1 - smooth) / factor + smooth);
                blended++;
            }
            assertEquals(plain(i) / expectedFactor, f.at(i), 1e-12 * plain(i), "pair " + i);
        }
        assertTrue(kept > 0 && divided > 0 && blended > 0, kept + " " + divided + " " + blended);
    }

    @Test
    void factorsOfATensorDivideTheFrequencies() {
        float[] factors = new float[32];
        for (int i = 0; i < factors.length; i++) {
            factors[i] = 1 + i;
        }
        RopeFrequencies f = RopeFrequencies.of(THETA, HEAD_DIM, Map.of(), Optional.of(factors), CONTEXT);
        for (int i = 0; i < f.pairs(); i++) {
            assertEquals(plain(i) / (1 + i), f.at(i), 1e-15);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RopeFrequencies.of(THETA, HEAD_DIM, Map.of(), Optional.of(new float[16]), CONTEXT));
        assertEquals("rope_freqs.weight has 16 factors, expected 32 (one per rotated pair)", e.getMessage());
        factors[3] = 0;
        e = assertThrows(IllegalArgumentException.class,
                () -> RopeFrequencies.of(THETA, HEAD_DIM, Map.of(), Optional.of(factors), CONTEXT));
        assertEquals("rope_freqs.weight[3] is 0.0, not a positive factor", e.getMessage());
    }

    /**
     * YaRN by hand, for head_dim 64 and θ 500000: with beta_fast 8 and beta_slow 2 over an original context of 256,
     * pair i turns 256·θ^(−i/32)/(2π) times over it, so pairs up to floor(3.97) = 3 keep their frequency, pairs from
     * ceil(7.35) = 8 on are divided by the factor, and the pairs between blend linearly; q and k grow by 0.1·ln 8 + 1.
     * (llama.cpp does not read a GGUF file's yarn_beta_* keys, so no llama.cpp reference covers these betas.)
     */
    @Test
    void yarnBlendsBetweenTheCorrectionPairs() {
        RopeFrequencies f = RopeFrequencies.of(THETA, HEAD_DIM, Map.of("rope_type", "yarn", "factor", 8.0,
                "original_max_position_embeddings", 256, "beta_fast", 8.0, "beta_slow", 2.0), Optional.empty(),
                CONTEXT);
        RopeFrequencies plain = RopeFrequencies.plain(THETA, HEAD_DIM);
        double low = Math.floor(HEAD_DIM * Math.log(256 / (8 * 2 * Math.PI)) / (2 * Math.log(THETA)));
        double high = Math.ceil(HEAD_DIM * Math.log(256 / (2 * 2 * Math.PI)) / (2 * Math.log(THETA)));
        assertEquals(3, low);
        assertEquals(8, high);
        for (int i = 0; i < plain.pairs(); i++) {
            double interpolated = Math.min(1, Math.max(0, (i - low) / (high - low)));
            double expected = plain.at(i) * (1 - interpolated) + plain.at(i) / 8 * interpolated;
            assertEquals(expected, f.at(i), 1e-15, "pair " + i);
        }
        assertEquals(0.1 * Math.log(8) + 1, f.magnitude(), 1e-12);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RopeFrequencies.of(THETA,
                HEAD_DIM, Map.of("rope_type", "yarn", "factor", 8.0, "original_max_position_embeddings", 256,
                        "mscale_all_dim", 1.0), Optional.empty(), CONTEXT));
        assertTrue(e.getMessage().startsWith("rope_scaling.mscale_all_dim of a yarn scaling is not supported"),
                e.getMessage());
    }

    /**
     * Phi-3's longrope: the short factors up to the original context, the long ones beyond it, and by default q and k
     * scaled by √(1 + ln(factor) / ln(original)), as llama.cpp's converter computes its attn_factor.
     */
    @Test
    void longropeTakesTheFactorsOfTheContextServed() {
        List<Double> shortFactors = new ArrayList<>();
        List<Double> longFactors = new ArrayList<>();
        for (int i = 0; i < HEAD_DIM / 2; i++) {
            shortFactors.add(1.0 + i / 100.0);
            longFactors.add(2.0 + i);
        }
        Map<String, Object> scaling = Map.of("rope_type", "longrope", "short_factor", shortFactors, "long_factor",
                longFactors, "original_max_position_embeddings", 4096, "factor", 32.0);
        RopeFrequencies plain = RopeFrequencies.plain(THETA, HEAD_DIM);
        RopeFrequencies within = RopeFrequencies.of(THETA, HEAD_DIM, scaling, Optional.empty(), 4096);
        RopeFrequencies beyond = RopeFrequencies.of(THETA, HEAD_DIM, scaling, Optional.empty(), 4097);
        for (int i = 0; i < HEAD_DIM / 2; i++) {
            assertEquals(plain.at(i) / shortFactors.get(i), within.at(i), 1e-15, "pair " + i);
            assertEquals(plain.at(i) / longFactors.get(i), beyond.at(i), 1e-15, "pair " + i);
        }
        double magnitude = Math.sqrt(1 + Math.log(32) / Math.log(4096));
        assertEquals(magnitude, within.magnitude(), 1e-12);
        assertEquals(magnitude, beyond.magnitude(), 1e-12);
        Map<String, Object> su = new java.util.HashMap<>(scaling);
        su.put("rope_type", "su");
        su.put("attention_factor", 1.5);
        assertEquals(1.5, RopeFrequencies.of(THETA, HEAD_DIM, su, Optional.empty(), 4096).magnitude());
        su.put("long_factor", longFactors.subList(1, longFactors.size()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RopeFrequencies.of(THETA, HEAD_DIM, su, Optional.empty(), 4096));
        assertTrue(e.getMessage().startsWith("rope_scaling.long_factor must list 32 factors"), e.getMessage());
        su.put("long_factor", longFactors);
        su.put("mscale", 1.0);
        e = assertThrows(IllegalArgumentException.class,
                () -> RopeFrequencies.of(THETA, HEAD_DIM, su, Optional.empty(), 4096));
        assertTrue(e.getMessage().startsWith("rope_scaling.mscale of a longrope scaling is not supported"),
                e.getMessage());
    }

    @Test
    void refusesWhatItCannotApplyByName() {
        for (String type : new String[]{"dynamic", "mrope"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RopeFrequencies.of(
                    THETA, HEAD_DIM, Map.of("rope_type", type, "factor", 2.0), Optional.empty(), CONTEXT));
            assertTrue(e.getMessage().startsWith("rope_scaling type \"" + type + "\" is not supported"),
                    e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RopeFrequencies.of(
                THETA, HEAD_DIM, Map.of("rope_type", "linear"), Optional.empty(), CONTEXT));
        assertEquals("rope_scaling.factor must be a positive number, got null", e.getMessage());
    }

    @Test
    void tablesUseTheScaledFrequencies() {
        RopeFrequencies f = RopeFrequencies.of(10000, 8, Map.of(), Optional.of(new float[]{1, 2, 4, 8}), CONTEXT);
        Rope rope = Rope.of(Rope.Style.INTERLEAVED, 8, 8, 3, f);
        for (int i = 0; i < 4; i++) {
            double angle = 2 * Math.pow(10000, -2.0 * i / 8) / (1 << i);
            assertEquals((float) Math.cos(angle), rope.cos()[2 * 4 + i]);
            assertEquals((float) Math.sin(angle), rope.sin()[2 * 4 + i]);
        }
    }
}
