package dev.laneway.engine.quant;

import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.Matrix;

/**
 * Quantizes a band of 32 float rows into tiles. The band is {@code 32 × paddedCols} floats, row-major, with the
 * padding already zero (so padding is quantized as the zeros it is).
 */
final class FloatTileEncoder {
    private static final int ROWS = Matrix.TILE_ROWS;
    private static final int COLS = Matrix.TILE_COLS;

    private FloatTileEncoder() {
    }

    /**
     * Q8: per row and 32-column group, d = max|w| / 127 rounded to bf16, code = round(w / d) (clamped to ±127).
     * Error per weight at most d/2 plus d's bf16 rounding times 127.
     */
    static void q8(float[] band, int paddedCols, byte[] out) {
        int tiles = paddedCols / COLS;
        for (int j = 0; j < tiles; j++) {
            int base = j * Matrix.Layout.TILES_Q8.tileBytes();
            for (int r = 0; r < ROWS; r++) {
                for (int g = 0; g < 8; g++) {
                    int from = r * paddedCols + j * COLS + g * 32;
                    float max = 0;
                    for (int k = 0; k < 32; k++) {
                        max = Math.max(max, Math.abs(band[from + k]));
                    }
                    short dBits = Floats.floatToBf16(max / 127f);
                    float d = Floats.bf16ToFloat(dBits);
                    TileBytes.q8Scale(out, base, r, g, dBits);
                    for (int k = 0; k < 32; k++) {
                        int code = d == 0 ? 0 : (int) Math.rint(band[from + k] / d);
                        TileBytes.q8Code(out, base, r, g * 32 + k, Math.max(-127, Math.min(127, code)));
                    }
                }
            }
        }
    }

    /**
     * q4_1: per row and 32-column group, zero = min and scale = (max − min) / 15, both rounded to bf16, code =
     * round((w − zero) / scale) clamped to 0..15. {@code out} must be zeroed.
     */
    static void q4_1(float[] band, int paddedCols, byte[] out) {
        int tiles = paddedCols / COLS;
        for (int j = 0; j < tiles; j++) {
            int base = j * Matrix.Layout.TILES_Q4_1.tileBytes();
            for (int r = 0; r < ROWS; r++) {
                for (int g = 0; g < 8; g++) {
                    int from = r * paddedCols + j * COLS + g * 32;
                    float min = band[from];
                    float max = band[from];
                    for (int k = 1; k < 32; k++) {
                        min = Math.min(min, band[from + k]);
                        max = Math.max(max, band[from + k]);
                    }
                    short sBits = Floats.floatToBf16((max - min) / 15f);
                    short zBits = Floats.floatToBf16(min);
                    float s = Floats.bf16ToFloat(sBits);
                    float z = Floats.bf16ToFloat(zBits);
                    TileBytes.q4_1Params(out, base, r, g, sBits, zBits);
                    for (int k = 0; k < 32; k++) {
                        int code = s == 0 ? 0 : (int) Math.rint((band[from + k] - z) / s);
                        TileBytes.q4_1Code(out, base, r, g * 32 + k, Math.max(0, Math.min(15, code)));
                    }
                }
            }
        }
    }

    /** The first non-finite value in the band's first {@code rows} rows, as {row, col}, or null. */
    static int[] firstNonFinite(float[] band, int rows, int cols, int paddedCols) {
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                if (!Float.isFinite(band[r * paddedCols + c])) {
                    return new int[]{r, c};
                }
            }
        }
        return null;
    }
}
