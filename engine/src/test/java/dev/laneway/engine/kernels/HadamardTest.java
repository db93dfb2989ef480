package dev.laneway.engine.kernels;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The rotation is llama.cpp's: the orthonormal Walsh–Hadamard matrix in Sylvester order (entry (i, j) is
 * (−1)^popcount(i & j) / √n, its own inverse), applied to each piece of a row, in the piece sizes llama.cpp uses.
 */
class HadamardTest {
    @Test
    void rotatesEachPieceByTheSylvesterMatrix() {
        for (int n : new int[] {64, 128, 256}) {
            for (int i = 0; i < n; i += 7) {
                float[] x = new float[2 * n];
                x[n + i] = 1;  // the second piece's i-th unit vector: the matrix's i-th column
                Hadamard.rotate(x, 0, 2 * n, n);
                for (int j = 0; j < n; j++) {
                    assertEquals(0, x[j], "the first piece stays");
                    double want = (Integer.bitCount(i & j) % 2 == 0 ? 1 : -1) / Math.sqrt(n);
                    assertEquals(want, x[n + j], 1e-7, n + ": " + i + ", " + j);
                }
            }
        }
    }

    @Test
    void isItsOwnInverse() {
        Random random = new Random(1);
        float[] x = new float[256];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
        }
        float[] y = x.clone();
        Hadamard.rotate(y, 0, y.length, 64);
        Hadamard.rotate(y, 0, y.length, 64);
        for (int i = 0; i < x.length; i++) {
            assertEquals(x[i], y[i], 1e-5);
        }
    }

    @Test
    void usesLlamaCppsPieceSizes() {
        assertEquals(64, Hadamard.keys(64));
        assertEquals(128, Hadamard.keys(128));
        assertEquals(64, Hadamard.keys(192));
        assertEquals(256, Hadamard.keys(256));
        assertEquals(64, Hadamard.values(256));
        assertEquals(0, Hadamard.keys(32));
        assertEquals(0, Hadamard.values(96));
    }
}
