package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.quant.Dequant;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Encoded blocks decode, by the ggml block decoders, to the floats they were made from, within their steps. */
class GgufBlockEncoderTest {

    @Test
    void q4kBlocksDecodeToTheirSourceWithinAStep() {
        Random random = new Random(3);
        int n = 4 * 256;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            // sub-blocks of different ranges and offsets, some all positive, so scales and minima both vary
            int sub = i / 32;
            x[i] = (float) (random.nextGaussian() * (0.01 + 0.02 * (sub % 5)) + (sub % 3 == 0 ? 0.05 : 0));
        }
        ByteBuffer b = ByteBuffer.allocate((int) DType.Q4_K.bytesFor(n)).order(ByteOrder.LITTLE_ENDIAN);
        GgufBlockEncoder.encode(DType.Q4_K, x, 0, n, b);
        assertEquals(4 * 144, b.position());
        float[] y = new float[n];
        Dequant.blocksToFloat(DType.Q4_K, b.array(), 0, n, y, 0);
        for (int sb = 0; sb < 4; sb++) {
            float maxStep = 0;
            for (int j = 0; j < 8; j++) {
                float lo = 0;
                float hi = 0;
                for (int l = 0; l < 32; l++) {
                    lo = Math.min(lo, x[sb * 256 + 32 * j + l]);
                    hi = Math.max(hi, x[sb * 256 + 32 * j + l]);
                }
                maxStep = Math.max(maxStep, (hi - lo) / 15);
            }
            for (int i = sb * 256; i < (sb + 1) * 256; i++) {
                // half a step from rounding the code, and the scale's and minimum's own 6-bit rounding
                assertTrue(Math.abs(y[i] - x[i]) <= 0.75 * maxStep, "element " + i + ": " + x[i] + " decoded as "
                        + y[i] + ", largest step " + maxStep);
            }
        }
    }

    @Test
    void typesWithoutAnEncoderAreRefused() {
        assertTrue(GgufBlockEncoder.supports(DType.Q4_K));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GgufBlockEncoder.encode(
                DType.Q6_K, new float[256], 0, 256, ByteBuffer.allocate(210)));
        assertEquals("cannot encode Q6_K", e.getMessage());
    }
}
