package dev.laneway.engine.kernels;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** GELU from llama.cpp's half-precision table: the tanh form, to half precision, saturated outside ±10. */
class GeluTest {
    @Test
    void theTableIsTheTanhFormInHalfPrecision() {
        for (float x = -9.99f; x < 9.99f; x += 0.0137f) {
            float half = HalfAttention.half(x);
            assertEquals(HalfAttention.half(Gelu.exact(half)), Gelu.of(x), 0f, "gelu(" + x + ")");
            // within half precision of the exact value at x itself
            assertEquals(Gelu.exact(x), Gelu.of(x), 2e-3 * Math.max(1, Math.abs(x)), "gelu(" + x + ")");
        }
        assertEquals(0f, Gelu.of(-10f));
        assertEquals(12.5f, Gelu.of(12.5f));
        assertEquals(0.8411920071f, Gelu.exact(1f), 1e-6f);
    }

    @Test
    void mulGatesTheUpProjection() {
        float[] gate = {1f, -2f, 11f, -11f};
        float[] up = {2f, 3f, 0.5f, 4f};
        new JavaKernels().geluMul(gate, up, 4);
        assertEquals(2 * Gelu.of(1f), gate[0]);
        assertEquals(3 * Gelu.of(-2f), gate[1]);
        assertEquals(5.5f, gate[2]);
        assertEquals(0f, gate[3]);
    }
}
