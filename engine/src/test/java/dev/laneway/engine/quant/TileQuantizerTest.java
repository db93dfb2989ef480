package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Tiles;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TileQuantizerTest {
    private static final float BF16_HALF_ULP = 0x1p-8f;

    // ---- floats to tiles ----

    @ParameterizedTest
    @CsvSource({"70, 300", "32, 256", "1, 1", "33, 513", "172, 64", "64, 172"})
    void quantizesFloatsToQ8WithinHalfAStep(int rows, int cols) {
        float[] w = gaussian(rows, cols, rows * 1000L + cols);
        Matrix m = TileQuantizer.of(f32("w", rows, cols, w), Layout.TILES_Q8).toMatrix();
        assertEquals(Layout.TILES_Q8, m.layout());
        checkQ8(w, rows, cols, m);
    }

    @ParameterizedTest
    @CsvSource({"70, 300", "32, 256", "1, 1", "33, 513", "172, 64", "64, 172"})
    void quantizesFloatsToQ4_1WithinHalfAStep(int rows, int cols) {
        float[] w = gaussian(rows, cols, rows * 7L + cols);
        Matrix m = TileQuantizer.of(f32("w", rows, cols, w), Layout.TILES_Q4_1).toMatrix();
        checkQ4_1(w, rows, cols, m);
    }

    @Test
    void quantizesEveryStories260kMatrix() throws IOException {
        GgufFile g = GgufFile.open(Shared.stories260kGguf());
        int matrices = 0;
        for (Tensor t : g.tensors()) {
            if (t.rank() != 2) {
                continue;
            }
            int rows = (int) t.dim(0);
            int cols = (int) t.dim(1);
            float[] w = Dequant.toFloat(t);
            checkQ8(w, rows, cols, TileQuantizer.of(t, Layout.TILES_Q8).toMatrix());
            checkQ4_1(w, rows, cols, TileQuantizer.of(t, Layout.TILES_Q4_1).toMatrix());
            matrices++;
        }
        assertEquals(2 + 5 * 7, matrices); // the embedding, the output, and 7 matrices per layer
    }

    /** Per row and 32-column group: error at most d/2, plus the clamp that d's bf16 rounding can cause. */
    private static void checkQ8(float[] w, int rows, int cols, Matrix m) {
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            Tiles.decodeRow(m, r, row, 0);
            for (int g = 0; g * 32 < cols; g++) {
                float max = 0;
                for (int c = g * 32; c < Math.min(cols, g * 32 + 32); c++) {
                    max = Math.max(max, Math.abs(w[r * cols + c]));
                }
                float d = Floats.bf16ToFloat(Floats.floatToBf16(max / 127));
                float tol = d / 2 + max * BF16_HALF_ULP + 1e-7f;
                for (int c = g * 32; c < Math.min(cols, g * 32 + 32); c++) {
                    assertEquals(w[r * cols + c], row[c], tol, "(" + r + ", " + c + ")");
                }
            }
        }
        checkPaddingIsZero(m, true);
    }

    /** Per group of the zero-padded matrix: error at most scale/2, plus the bf16 rounding of scale and zero. */
    private static void checkQ4_1(float[] w, int rows, int cols, Matrix m) {
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            Tiles.decodeRow(m, r, row, 0);
            for (int g = 0; g * 32 < cols; g++) {
                float min = Float.MAX_VALUE;
                float max = -Float.MAX_VALUE;
                for (int c = g * 32; c < g * 32 + 32; c++) {
                    float v = c < cols ? w[r * cols + c] : 0f;
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
                float s = (max - min) / 15;
                float tol = s / 2 * (1 + 2 * BF16_HALF_ULP) + (Math.abs(min) + Math.abs(max)) * 2 * BF16_HALF_ULP
                        + 1e-7f;
                for (int c = g * 32; c < Math.min(cols, g * 32 + 32); c++) {
                    assertEquals(w[r * cols + c], row[c], tol, "(" + r + ", " + c + ")");
                }
            }
        }
        checkPaddingIsZero(m, false);
    }

    /** Padding rows decode to 0; so do padding columns, exactly for Q8 and whole padding groups. */
    private static void checkPaddingIsZero(Matrix m, boolean exactColumns) {
        Matrix padded = new Matrix(m.name(), m.layout(), m.paddedRows(), m.paddedCols(), m.data());
        float[] row = new float[m.paddedCols()];
        for (int r = 0; r < m.paddedRows(); r++) {
            Tiles.decodeRow(padded, r, row, 0);
            int firstZero = r >= m.rows() ? 0 : exactColumns ? m.cols() : (m.cols() + 31) / 32 * 32;
            for (int c = firstZero; c < m.paddedCols(); c++) {
                assertEquals(0f, row[c], "padding (" + r + ", " + c + ")");
            }
        }
    }

    @Test
    void placesQ8FieldsWhereTheBriefSays() {
        float[] w = new float[40 * 300];
        w[37 * 300 + 299] = 5f;
        Matrix m = TileQuantizer.of(f32("w", 40, 300, w), Layout.TILES_Q8).toMatrix();
        ByteBuffer d = m.data();
        int tile = (1 * 2 + 1) * 8704;      // tile (1, 1): rows 32..63, columns 256..511
        int i = 1 * 32 + 5;                  // group 1 (columns 288..319 of the matrix), row 5 of the tile
        assertEquals(Floats.floatToBf16(5f / 127), d.getShort(tile + 2 * i));
        assertEquals(127, d.get(tile + 512 + 43 * 32 + 5));
        int nonZero = 0;
        for (int b = 0; b < d.limit(); b++) {
            nonZero += d.get(b) != 0 ? 1 : 0;
        }
        assertEquals(3, nonZero); // two bytes of d, one code
    }

    @Test
    void placesQ4_1FieldsWhereTheBriefSays() {
        float[] w = new float[32 * 256];
        w[21 * 256 + 77] = 3f;
        Matrix m = TileQuantizer.of(f32("w", 32, 256, w), Layout.TILES_Q4_1).toMatrix();
        ByteBuffer d = m.data();
        int i = 2 * 32 + 21; // group 2, row 21
        assertEquals(Floats.floatToBf16(0.2f), d.getShort(2 * i));
        assertEquals(0, d.getShort(512 + 2 * i));
        int code = 1024 + ((21 / 16) * 8 + 2) * 256 + 8 * (77 % 32) + (21 % 16) / 2;
        assertEquals((byte) 0xf0, d.get(code)); // odd row: high nibble
        int nonZero = 0;
        for (int b = 0; b < d.limit(); b++) {
            nonZero += d.get(b) != 0 ? 1 : 0;
        }
        assertEquals(3, nonZero);
    }

    @Test
    void refusesNonFiniteWeightsByPosition() {
        float[] w = new float[50 * 40];
        w[45 * 40 + 7] = Float.NaN;
        TileQuantizer q = TileQuantizer.of(f32("blk.3.w", 50, 40, w), Layout.TILES_Q8);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, q::toMatrix);
        assertTrue(e.getMessage().contains("blk.3.w") && e.getMessage().contains("row 45, column 7"), e.getMessage());
    }

    @Test
    void refusesFloatsToQ4KTilesAndNonMatrices() {
        assertThrows(IllegalArgumentException.class,
                () -> TileQuantizer.of(f32("w", 32, 256, new float[32 * 256]), Layout.TILES_Q4_K));
        assertThrows(IllegalArgumentException.class, () -> TileQuantizer.of(
                new Tensor("v", DType.F32, new long[]{8}, ByteBuffer.allocate(32)), Layout.TILES_Q8));
        assertThrows(IllegalArgumentException.class,
                () -> TileQuantizer.of(f32("w", 2, 2, new float[4]), Layout.BF16));
    }

    @Test
    void streamsOneBandAtATime() throws IOException {
        float[] w = gaussian(100, 600, 5);
        TileQuantizer q = TileQuantizer.of(f32("w", 100, 600, w), Layout.TILES_Q4_1);
        assertEquals(4, q.bands());
        assertEquals(3 * 5120, q.bandBytes());
        assertEquals(4L * 3 * 5120, q.bytes());
        List<Integer> sizes = new ArrayList<>();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        q.forEachBand(chunk -> {
            sizes.add(chunk.remaining());
            byte[] b = new byte[chunk.remaining()];
            chunk.get(b);
            all.write(b, 0, b.length);
        });
        assertEquals(List.of(15360, 15360, 15360, 15360), sizes);
        ByteBuffer expected = TileQuantizer.of(f32("w", 100, 600, w), Layout.TILES_Q4_1).toMatrix().data();
        byte[] e = new byte[expected.remaining()];
        expected.get(e);
        assertArrayEquals(e, all.toByteArray());
    }

    // ---- ggml blocks to tiles, exactly ----

    @ParameterizedTest
    @CsvSource({
        "Q4_0, TILES_Q4_1, 45, 96",
        "Q4_0, TILES_Q4_1, 64, 512",
        "Q4_1, TILES_Q4_1, 33, 288",
        "Q4_K, TILES_Q4_1, 40, 512",
        "Q4_K, TILES_Q4_K, 40, 512",
        "Q4_K, TILES_Q4_K, 1, 256",
        "Q8_0, TILES_Q8, 37, 320",
    })
    void convertsBlocksExactlyUpToBf16Scales(DType type, Layout layout, int rows, int cols) {
        Random rnd = new Random(rows * 31L + cols);
        Tensor t = randomBlocks(type, rows, cols, rnd, false);
        TileQuantizer q = TileQuantizer.of(t, layout);
        assertTrue(q.exact());
        Matrix m = q.toMatrix();
        float[] expected = new float[cols];
        float[] actual = new float[cols];
        byte[] raw = new byte[(int) type.bytesFor(cols)];
        for (int r = 0; r < rows; r++) {
            Dequant.rowToFloat(t, r, expected, 0);
            Tiles.decodeRow(m, r, actual, 0);
            t.data().get(r * raw.length, raw, 0, raw.length);
            for (int c = 0; c < cols; c++) {
                float[] e = roundingErrors(type, layout, raw, c);
                float tol = e[0] + e[1] + 1e-6f * Math.abs(expected[c]);
                assertEquals(expected[c], actual[c], tol, type + " -> " + layout + " (" + r + ", " + c + ")");
            }
        }
        checkPaddingIsZero(m, true);
    }

    /** With scales that bf16 holds exactly, the conversion is exact. */
    @ParameterizedTest
    @CsvSource({"Q4_0, TILES_Q4_1", "Q4_1, TILES_Q4_1", "Q4_K, TILES_Q4_1", "Q4_K, TILES_Q4_K", "Q8_0, TILES_Q8"})
    void convertsBlocksExactlyWhenScalesFitBf16(DType type, Layout layout) {
        int rows = 35;
        int cols = 512;
        Tensor t = randomBlocks(type, rows, cols, new Random(9), true);
        Matrix m = TileQuantizer.of(t, layout).toMatrix();
        float[] expected = new float[cols];
        float[] actual = new float[cols];
        for (int r = 0; r < rows; r++) {
            Dequant.rowToFloat(t, r, expected, 0);
            Tiles.decodeRow(m, r, actual, 0);
            assertArrayEquals(expected, actual, type + " -> " + layout + " row " + r);
        }
    }

    @Test
    void isExactOnlyForCodeCopyingPairs() {
        assertTrue(TileQuantizer.isExact(DType.Q4_0, Layout.TILES_Q4_1));
        assertTrue(TileQuantizer.isExact(DType.Q4_K, Layout.TILES_Q4_K));
        assertFalse(TileQuantizer.isExact(DType.Q6_K, Layout.TILES_Q4_1));
        assertFalse(TileQuantizer.isExact(DType.Q4_0, Layout.TILES_Q8));
        assertFalse(TileQuantizer.of(f32("w", 2, 2, new float[4]), Layout.TILES_Q4_1).exact());
    }

    @Test
    void requantizesOtherBlockTypesFromFloats() {
        Tensor t = randomBlocks(DType.Q4_K, 40, 512, new Random(3), false);
        // Q4_K to Q8 is not a code copy: it goes through floats.
        TileQuantizer q = TileQuantizer.of(t, Layout.TILES_Q8);
        assertFalse(q.exact());
        checkQ8(Dequant.toFloat(t), 40, 512, q.toMatrix());
    }

    /**
     * The most that bf16 rounding of the tile's scales can move column c of a row of blocks, as {scale part, zero
     * part}: the largest code times the scale's rounding, plus the zero's rounding. Q4_K tiles round ggml's d and
     * dmin (times the 6-bit sc and m); the others round the block scale and zero, x = q·scale + zero.
     */
    private static float[] roundingErrors(DType type, Layout layout, byte[] raw, int c) {
        int o = c / type.blockSize() * type.blockBytes();
        float d = GgmlBlocks.f16(raw, o);
        return switch (type) {
            case Q4_0 -> new float[]{15 * err(d), err(-8 * d)};
            case Q4_1 -> new float[]{15 * err(d), err(GgmlBlocks.f16(raw, o + 2))};
            case Q8_0 -> new float[]{128 * err(d), 0};
            case Q4_K -> {
                float dmin = GgmlBlocks.f16(raw, o + 2);
                int sm = GgmlBlocks.scaleMinK4(raw, o + 4, (c % 256) / 32);
                int sc = sm & 0xff;
                int m = sm >>> 8;
                yield layout == Layout.TILES_Q4_K ? new float[]{15 * sc * err(d), m * err(dmin)}
                        : new float[]{15 * err(d * sc), err(dmin * m)};
            }
            default -> throw new IllegalArgumentException(type.name());
        };
    }

    private static float err(float v) {
        return Math.abs(v - bf16(v));
    }

    /**
     * Random blocks with f16 scales in a realistic range; with {@code bf16Scales}, scales (and Q4_K's d·sc, dmin·m)
     * that bf16 holds exactly.
     */
    static Tensor randomBlocks(DType type, int rows, int cols, Random rnd, boolean bf16Scales) {
        int blocks = rows * cols / type.blockSize();
        byte[] data = new byte[blocks * type.blockBytes()];
        rnd.nextBytes(data);
        for (int b = 0; b < blocks; b++) {
            int o = b * type.blockBytes();
            DequantTest.putF16(data, o, scale(rnd, bf16Scales));
            if (type == DType.Q4_1 || type == DType.Q4_K) {
                DequantTest.putF16(data, o + 2, (rnd.nextBoolean() ? 1 : -1) * scale(rnd, bf16Scales));
            }
            if (type == DType.Q4_K && bf16Scales) {
                for (int k = 0; k < 12; k++) {
                    data[o + 4 + k] &= 0x03; // scales and mins of 0..3, so d·sc and dmin·m stay exact in bf16
                }
            }
        }
        return new Tensor("w", type, new long[]{rows, cols}, ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN));
    }

    private static float scale(Random rnd, boolean bf16Exact) {
        if (bf16Exact) {
            return (1 + rnd.nextInt(8) / 8f) * (float) Math.pow(2, -4 - rnd.nextInt(6));
        }
        return (float) (0.001 + rnd.nextDouble() * 0.05);
    }

    private static float bf16(float v) {
        return Floats.bf16ToFloat(Floats.floatToBf16(v));
    }

    static Tensor f32(String name, int rows, int cols, float[] w) {
        ByteBuffer b = ByteBuffer.allocate(w.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(w);
        return new Tensor(name, DType.F32, new long[]{rows, cols}, b);
    }

    static float[] gaussian(int rows, int cols, long seed) {
        Random rnd = new Random(seed);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (rnd.nextGaussian() * 0.05 + (i % 7 == 0 ? 0.02 : 0));
        }
        return w;
    }
}
