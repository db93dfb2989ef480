package dev.laneway.engine.kernels.natives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.HalfAttention;
import dev.laneway.engine.kernels.Q8Attention;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Rope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property tests: every native code path this CPU runs (each forced in turn), against {@link JavaKernels}, on random
 * inputs of odd sizes, every weight layout, batch 1 and more.
 *
 * <p>Tolerances. Float paths sum the same products in another order (and fuse multiply-adds), so each result may be
 * off the exact sum by γ(n)·Σ|w·x| (γ(n) = n·u / (1 − n·u), u = 2⁻²⁴, the classic bound for a sum of n products), and
 * two of them differ by twice that. Here |w| counts each term a weight is made of (|code·scale| + |zero| for q4_1), so
 * cancellation inside a weight cannot hide rounding. The int8 paths (every tile layout on AVX-512 and AVX2) also round
 * each activation to its 32-column group's step d = max|x| / 127, an error of at most d / 2 per activation, which adds
 * Σ_groups (d / 2)·Σ|w| to the bound. Element-wise operations are held to a few ulps.
 */
class NativeKernelsTest {
    private static final JavaKernels REFERENCE = new JavaKernels();
    /** Half-precision ulps of difference allowed between native attention over an f16 cache and its reference. */
    private static final int HALF_ULPS = 2;
    private static final Map<Isa, NativeKernels> KERNELS = new EnumMap<>(Isa.class);
    /**
     * Kernels that take every matrix for one streamed from memory (a one-byte cache), so products stage or prefetch
     * weights, keyed by code path and then by the way streamed weights are read.
     */
    private static final Map<Isa, Map<Streaming, NativeKernels>> STREAMING = new EnumMap<>(Isa.class);

    @BeforeAll
    static void createKernels() {
        for (Isa isa : supportedIsas()) {
            KERNELS.put(isa, NativeKernels.create(isa, 3));  // more threads than cores: the pool's hand-off is exercised
            Map<Streaming, NativeKernels> byStreaming = new EnumMap<>(Streaming.class);
            for (Streaming streaming : Streaming.KNOWN) {
                byStreaming.put(streaming, NativeKernels.create(isa, 3, 1, streaming));
            }
            STREAMING.put(isa, byStreaming);
        }
    }

    @AfterAll
    static void closeKernels() {
        KERNELS.values().forEach(NativeKernels::close);
        STREAMING.values().forEach(m -> m.values().forEach(NativeKernels::close));
    }

    static List<Isa> supportedIsas() {
        return Arrays.stream(Isa.values()).filter(i -> i.compareTo(NativeCpu.bestIsa()) <= 0).toList();
    }

    static Stream<Arguments> matmulCases() {
        int[][] shapes = {{1, 1}, {37, 300}, {64, 256}, {33, 513}, {97, 40}, {70, 1100}};
        List<Arguments> cases = new ArrayList<>();
        for (Isa isa : supportedIsas()) {
            for (Layout layout : Layout.values()) {
                for (Streaming streaming : Streaming.values()) {
                    for (int[] shape : shapes) {
                        for (int batch : new int[] {1, 5}) {
                            cases.add(Arguments.of(isa, layout, shape[0], shape[1], batch, streaming));
                        }
                    }
                    cases.add(Arguments.of(isa, layout, 45, 600, 33, streaming));
                }
            }
        }
        return cases.stream();
    }

    private static NativeKernels kernels(Isa isa, Streaming streaming) {
        return streaming == Streaming.IN_PLACE ? KERNELS.get(isa) : STREAMING.get(isa).get(streaming);
    }

    @ParameterizedTest(name = "{0} {1} {2}x{3} batch {4}, {5}")
    @MethodSource("matmulCases")
    void matmulAgreesWithReference(Isa isa, Layout layout, int rows, int cols, int batch, Streaming streaming) {
        Random random = new Random(rows * 31L + cols * 7L + batch + layout.ordinal() * 1000L);
        Matrix w = RandomMatrices.create(layout, rows, cols, random);
        float[] x = RandomMatrices.gaussian(batch * cols, random);
        float[] expected = new float[batch * rows];
        float[] actual = new float[batch * rows];
        Arrays.fill(actual, Float.NaN);
        REFERENCE.matmul(w, x, expected, batch);
        kernels(isa, streaming).matmul(w, x, actual, batch);

        boolean int8 = isa != Isa.SCALAR && layout.tiled();
        float[][] magnitude = new float[rows][cols];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                magnitude[r][c] = RandomMatrices.magnitude(w, r, c);
            }
        }
        double gamma = gamma(cols + 8);
        for (int b = 0; b < batch; b++) {
            for (int r = 0; r < rows; r++) {
                double bound = 0;
                for (int c = 0; c < cols; c++) {
                    bound += 2 * gamma * magnitude[r][c] * Math.abs(x[b * cols + c]);
                }
                if (int8) {
                    for (int c0 = 0; c0 < cols; c0 += 32) {
                        double amax = 0;
                        double groupMagnitude = 0;
                        for (int c = c0; c < Math.min(cols, c0 + 32); c++) {
                            amax = Math.max(amax, Math.abs(x[b * cols + c]));
                            groupMagnitude += magnitude[r][c];
                        }
                        bound += amax / 127 / 2 * groupMagnitude;
                    }
                }
                bound = bound * 1.01 + 1e-30;
                int i = b * rows + r;
                if (!(Math.abs(actual[i] - expected[i]) <= bound)) {
                    fail("row " + r + " of batch row " + b + ": native " + actual[i] + ", reference " + expected[i]
                            + ", allowed difference " + bound);
                }
            }
        }
    }

    /** Staging and prefetching change how weights reach the core, never the arithmetic: the same bits as in place. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void streamedProductsEqualInPlaceOnes(Isa isa) {
        Random random = new Random(5);
        for (Layout layout : Layout.values()) {
            for (int[] shape : new int[][] {{70, 1100}, {96, 512}, {33, 300}}) {
                Matrix w = RandomMatrices.create(layout, shape[0], shape[1], random);
                for (int batch : new int[] {1, 4}) {
                    float[] x = RandomMatrices.gaussian(batch * shape[1], random);
                    float[] inPlace = new float[batch * shape[0]];
                    KERNELS.get(isa).matmul(w, x, inPlace, batch);
                    for (Streaming streaming : Streaming.KNOWN) {
                        float[] streamed = new float[batch * shape[0]];
                        STREAMING.get(isa).get(streaming).matmul(w, x, streamed, batch);
                        assertArrayEquals(inPlace, streamed, layout + " " + shape[0] + "x" + shape[1] + " batch "
                                + batch + ", " + streaming.label());
                    }
                }
            }
        }
    }

    static Stream<Arguments> rowCases() {
        return Arrays.stream(Layout.values()).flatMap(l -> Stream.of(Arguments.of(l, 37, 300, 36),
                Arguments.of(l, 64, 513, 0), Arguments.of(l, 3, 7, 2)));
    }

    @ParameterizedTest(name = "{0} {1}x{2} row {3}")
    @MethodSource("rowCases")
    void rowAgreesWithReference(Layout layout, int rows, int cols, int row) {
        Matrix w = RandomMatrices.create(layout, rows, cols, new Random(rows + cols));
        float[] expected = new float[cols + 5];
        float[] actual = new float[cols + 5];
        REFERENCE.row(w, row, expected, 5);
        KERNELS.get(Isa.SCALAR).row(w, row, actual, 5);
        for (int c = 0; c < cols; c++) {
            // One rounding apart at most: the native decode may fuse code·scale + zero into one multiply-add.
            double bound = Math.ulp(RandomMatrices.magnitude(w, row, c)) * 2;
            assertTrue(Math.abs(actual[5 + c] - expected[5 + c]) <= bound,
                    "column " + c + ": native " + actual[5 + c] + ", reference " + expected[5 + c]);
        }
    }

    static Stream<Arguments> isas() {
        return supportedIsas().stream().map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void rmsnormAgreesWithReference(Isa isa) {
        Random random = new Random(1);
        for (int dim : new int[] {1, 7, 288, 1003}) {
            for (int batch : new int[] {1, 3}) {
                float[] x = RandomMatrices.gaussian(dim * batch, random);
                float[] weight = RandomMatrices.gaussian(dim, random);
                float[] expected = new float[dim * batch];
                REFERENCE.rmsnorm(expected, x, weight, dim, batch, 1e-5f);
                KERNELS.get(isa).rmsnorm(x, x, weight, dim, batch, 1e-5f);  // in place, as the forward may do
                assertClose(expected, x, 1e-5, 0, "rmsnorm dim " + dim);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void ropeAgreesWithReference(Isa isa) {
        Random random = new Random(2);
        for (Rope.Style style : Rope.Style.values()) {
            for (int[] dims : new int[][] {{64, 64}, {18, 18}, {80, 32}}) {
                Rope rope = Rope.of(style, dims[0], dims[1], 40, 10000.0);
                int heads = 3;
                int batch = 4;
                float[] expected = RandomMatrices.gaussian(batch * heads * dims[0], random);
                float[] actual = expected.clone();
                REFERENCE.rope(expected, batch, heads, 29, rope);
                KERNELS.get(isa).rope(actual, batch, heads, 29, rope);
                assertClose(expected, actual, 0, 1e-6, "rope " + style + " " + dims[0] + "/" + dims[1]);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void attentionAgreesWithReference(Isa isa) {
        Random random = new Random(3);
        // heads, kv heads, head dim, start position, batch: odd head sizes (masked tails), grouped queries, a head too
        // large to keep in registers (136), long and empty histories; a sixth number is a sliding window, a seventh a
        // soft cap on the scores (Gemma 2's)
        for (int[] s : new int[][] {{4, 2, 20, 0, 1}, {4, 2, 20, 7, 5}, {6, 6, 64, 130, 1}, {8, 1, 32, 0, 19},
                {2, 1, 136, 5, 2}, {4, 4, 80, 3, 3}, {4, 2, 20, 7, 5, 3}, {6, 6, 64, 130, 1, 16},
                {8, 1, 32, 0, 19, 4}, {4, 2, 20, 7, 5, 0, 1}, {6, 6, 64, 130, 1, 16, 2}}) {
            AttentionShape shape = new AttentionShape(s[0], s[1], s[2], (float) (1 / Math.sqrt(s[2])),
                    s.length > 5 ? s[5] : 0, s.length > 6 ? s[6] : 0);
            int startPos = s[3];
            int batch = s[4];
            KvCache cache = new KvCache(1, startPos + batch + 3, shape.kvDim());
            KvCache.Layer layer = cache.layer(0);
            float[] keys = RandomMatrices.gaussian((startPos + batch) * shape.kvDim(), random);
            float[] values = RandomMatrices.gaussian((startPos + batch) * shape.kvDim(), random);
            layer.store(keys, values, startPos + batch, 0);
            float[] q = RandomMatrices.gaussian(batch * shape.qDim(), random);
            float[] expected = new float[batch * shape.qDim()];
            float[] actual = new float[batch * shape.qDim()];
            REFERENCE.attention(expected, q, layer, batch, startPos, shape);
            KERNELS.get(isa).attention(actual, q, layer, batch, startPos, shape);
            // Outputs are weighted means of values of about unit size.
            assertClose(expected, actual, 0, 2e-5, "attention " + Arrays.toString(s));
        }
    }

    /**
     * Over a half-precision cache the reference is {@link HalfAttention}. Both round the query and the accumulator to
     * half precision at the same points; they differ only in how a score's products are summed (SIMD order, fused
     * multiply-adds) and in e^x (a polynomial good to about 1 ulp against Math.exp), float-level differences that
     * now and then round the accumulator the other way: one half-precision ulp (2⁻¹¹ relative) of its size, carried
     * on through later positions. The bound allows {@value #HALF_ULPS} such ulps of the largest value the head reads
     * (seen: at most 0.23 on these cases).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void halfPrecisionAttentionAgreesWithHalfAttention(Isa isa) {
        Random random = new Random(12);
        // heads, kv heads, head dim, start position, batch: grouped queries, odd head sizes (masked tails), heads
        // past the registers (136, 200), a prompt batch, histories up to a thousand positions; a sixth number is a
        // sliding window, a seventh a soft cap on the scores
        for (int[] s : new int[][] {{4, 2, 20, 0, 1}, {4, 2, 20, 7, 5}, {6, 6, 48, 130, 1}, {8, 1, 32, 0, 19},
                {2, 1, 136, 5, 2}, {4, 4, 80, 3, 3}, {32, 8, 64, 1000, 1}, {6, 2, 7, 300, 4}, {2, 2, 200, 60, 2},
                {12, 4, 128, 511, 2}, {4, 2, 20, 7, 5, 3}, {32, 8, 64, 1000, 1, 512}, {6, 2, 7, 300, 4, 9},
                {4, 2, 20, 7, 5, 0, 2}, {32, 8, 64, 1000, 1, 512, 3}}) {
            AttentionShape shape = new AttentionShape(s[0], s[1], s[2], (float) (1 / Math.sqrt(s[2])),
                    s.length > 5 ? s[5] : 0, s.length > 6 ? s[6] : 0);
            int startPos = s[3];
            int batch = s[4];
            int positions = startPos + batch;
            KvCache.Layer layer = new KvCache(1, positions + 3, shape.kvDim(), KvCache.Precision.F16).layer(0);
            // Keys scaled so that scores spread over several units: the running maximum moves often.
            float[] keys = scaled(RandomMatrices.gaussian(positions * shape.kvDim(), random), 3f);
            float[] values = RandomMatrices.gaussian(positions * shape.kvDim(), random);
            layer.store(keys, values, positions, 0);
            float[] q = RandomMatrices.gaussian(batch * shape.qDim(), random);
            float[] expected = new float[batch * shape.qDim()];
            float[] actual = new float[batch * shape.qDim()];
            HalfAttention.attend(expected, q, 0, batch, layer, 0, startPos, shape);
            KERNELS.get(isa).attention(actual, q, layer, batch, startPos, shape);
            double largest = 0;
            for (float v : values) {
                largest = Math.max(largest, Math.abs(Floats.f16ToFloat(Floats.floatToF16(v))));
            }
            assertClose(expected, actual, 0, HALF_ULPS * largest * 0x1p-11, "half attention " + Arrays.toString(s));
        }
    }


    /**
     * Over an eight-bit cache the reference is {@link Q8Attention}: both read the same blocks as step · code and differ
     * only in how sums are ordered and in e^x, float-level differences (the float cache's bound). Head sizes are whole
     * blocks, as the cache needs; the cases cover grouped queries, heads past 128, prompt batches, a sliding window
     * and a soft cap.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void eightBitAttentionAgreesWithQ8Attention(Isa isa) {
        Random random = new Random(13);
        // heads, kv heads, head dim, start position, batch, window, soft cap
        for (int[] s : new int[][] {{4, 2, 32, 0, 1}, {4, 2, 32, 7, 5}, {6, 6, 64, 130, 1}, {8, 1, 32, 0, 19},
                {2, 1, 160, 5, 2}, {32, 8, 64, 1000, 1}, {12, 4, 128, 511, 2}, {2, 2, 256, 60, 2},
                {32, 8, 64, 1000, 1, 512}, {4, 2, 32, 7, 5, 0, 2}}) {
            AttentionShape shape = new AttentionShape(s[0], s[1], s[2], (float) (1 / Math.sqrt(s[2])),
                    s.length > 5 ? s[5] : 0, s.length > 6 ? s[6] : 0);
            int startPos = s[3];
            int batch = s[4];
            int positions = startPos + batch;
            KvCache.Layer layer = new KvCache(1, positions + 3, shape.kvDim(), shape.headDim(), KvCache.Precision.Q8)
                    .layer(0);
            float[] keys = scaled(RandomMatrices.gaussian(positions * shape.kvDim(), random), 3f);
            float[] values = RandomMatrices.gaussian(positions * shape.kvDim(), random);
            layer.store(keys, values, positions, 0);
            float[] q = RandomMatrices.gaussian(batch * shape.qDim(), random);
            float[] expected = new float[batch * shape.qDim()];
            float[] actual = new float[batch * shape.qDim()];
            Q8Attention.attend(expected, q, 0, batch, layer, 0, startPos, shape);
            KERNELS.get(isa).attention(actual, q, layer, batch, startPos, shape);
            assertClose(expected, actual, 0, 2e-5, "eight-bit attention " + Arrays.toString(s));
        }
    }

    /**
     * A row's attention does not depend on the rows computed with it: a prompt's rows attended together give the
     * same bits as each attended alone, as a decode step or the rest of a prompt after a prefix-cache hit attends it.
     * Batching and the prefix cache rely on it (llama.cpp's CPU attention changes its arithmetic from 64 rows on).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void aRowsAttentionIsTheSameBitsInAnyBatch(Isa isa) {
        Random random = new Random(8);
        // heads, kv heads, head dim, start position, batch, window
        for (int[] s : new int[][] {{32, 8, 64, 30, 70, 0}, {6, 2, 48, 0, 66, 0}, {8, 2, 128, 5, 65, 0},
                {4, 2, 20, 100, 64, 40}, {2, 1, 136, 3, 9, 0}}) {
            AttentionShape shape = new AttentionShape(s[0], s[1], s[2], (float) (1 / Math.sqrt(s[2])), s[5], 0);
            int startPos = s[3];
            int batch = s[4];
            int positions = startPos + batch;
            for (KvCache.Precision precision : KvCache.Precision.values()) {
                if (precision == KvCache.Precision.Q8 && shape.headDim() % KvCache.Q8_BLOCK != 0) {
                    continue;  // an eight-bit cache keeps heads of whole blocks
                }
                KvCache.Layer layer = new KvCache(1, positions, shape.kvDim(), shape.headDim(), precision).layer(0);
                layer.store(scaled(RandomMatrices.gaussian(positions * shape.kvDim(), random), 3f),
                        RandomMatrices.gaussian(positions * shape.kvDim(), random), positions, 0);
                float[] q = RandomMatrices.gaussian(batch * shape.qDim(), random);
                float[] together = new float[batch * shape.qDim()];
                KERNELS.get(isa).attention(together, q, layer, batch, startPos, shape);
                for (int r = 0; r < batch; r++) {
                    float[] row = Arrays.copyOfRange(q, r * shape.qDim(), (r + 1) * shape.qDim());
                    float[] alone = new float[shape.qDim()];
                    KERNELS.get(isa).attention(alone, row, layer, 1, startPos + r, shape);
                    assertArrayEquals(Arrays.copyOfRange(together, r * shape.qDim(), (r + 1) * shape.qDim()), alone,
                            precision + " " + Arrays.toString(s) + " row " + r);
                }
            }
        }
    }

    private static float[] scaled(float[] a, float factor) {
        for (int i = 0; i < a.length; i++) {
            a[i] *= factor;
        }
        return a;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void elementwiseOperationsAgreeWithReference(Isa isa) {
        Random random = new Random(4);
        NativeKernels kernels = KERNELS.get(isa);
        for (int n : new int[] {0, 1, 13, 768, 100_003}) {
            float[] gate = RandomMatrices.gaussian(n + 2, random);
            for (int i = 0; i < Math.min(n, 4); i++) {
                gate[i] = new float[] {-200f, -90f, 90f, 0f}[i];  // exp's extremes
            }
            float[] up = RandomMatrices.gaussian(n + 2, random);
            float[] expected = gate.clone();
            float[] actual = gate.clone();
            REFERENCE.siluMul(expected, up, n);
            kernels.siluMul(actual, up, n);
            assertClose(expected, actual, 1e-6, 1e-30, "siluMul n " + n);
            float[] gelu = RandomMatrices.gaussian(n, random);
            for (int i = 0; i < n; i++) {
                gelu[i] *= 4f;  // past ±10 now and then: the saturated ends
            }
            float[] geluExpected = gelu.clone();
            float[] geluActual = gelu.clone();
            REFERENCE.geluMul(geluExpected, up, n);
            kernels.geluMul(geluActual, up, n);
            // the same table, built with C's tanh and Java's: at most a half-precision ulp apart, rarely
            assertClose(geluExpected, geluActual, 0x1p-10, 1e-30, "geluMul n " + n);
            float[] portable = gelu.clone();
            KERNELS.get(Isa.SCALAR).geluMul(portable, up, n);
            assertArrayEquals(portable, geluActual, "geluMul n " + n + ": the same table lookups as the portable path");

            float[] sumExpected = gate.clone();
            float[] sumActual = gate.clone();
            REFERENCE.add(sumExpected, up, n);
            kernels.add(sumActual, up, n);
            assertArrayEquals(sumExpected, sumActual, "add n " + n);
        }
        float[] bias = RandomMatrices.gaussian(37, random);
        float[] expected = RandomMatrices.gaussian(37 * 3 + 1, random);
        float[] actual = expected.clone();
        REFERENCE.addBias(expected, bias, 3);
        kernels.addBias(actual, bias, 3);
        assertArrayEquals(expected, actual, "addBias");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void concurrentCallersGetTheirOwnResults(Isa isa) throws InterruptedException {
        Matrix w = RandomMatrices.create(Layout.TILES_Q4_1, 300, 700, new Random(5));
        NativeKernels kernels = KERNELS.get(isa);
        float[][] inputs = new float[4][];
        float[][] expected = new float[4][];
        for (int t = 0; t < 4; t++) {
            inputs[t] = RandomMatrices.gaussian(700 * 2, new Random(10 + t));
            expected[t] = new float[600];
            kernels.matmul(w, inputs[t], expected[t], 2);
        }
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread[] threads = new Thread[4];
        for (int t = 0; t < 4; t++) {
            int id = t;
            threads[t] = new Thread(() -> {
                float[] out = new float[600];
                for (int k = 0; k < 50; k++) {
                    kernels.matmul(w, inputs[id], out, 2);
                    if (!Arrays.equals(out, expected[id])) {
                        failures.add(new AssertionError("caller " + id + " got another result on call " + k));
                        return;
                    }
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failures);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void runsMatricesOnTheJavaHeapThroughTheJavaKernels(Isa isa) {
        Matrix direct = RandomMatrices.create(Layout.BF16, 20, 30, new Random(6));
        java.nio.ByteBuffer heap = java.nio.ByteBuffer.allocate(direct.data().capacity());
        heap.put(direct.data().duplicate()).flip();
        Matrix onHeap = new Matrix("heap", Layout.BF16, 20, 30, heap);
        float[] x = RandomMatrices.gaussian(30, new Random(7));
        float[] expected = new float[20];
        float[] actual = new float[20];
        REFERENCE.matmul(onHeap, x, expected, 1);
        KERNELS.get(isa).matmul(onHeap, x, actual, 1);
        assertArrayEquals(expected, actual);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void refusesArraysTooShortForTheirShapes(Isa isa) {
        NativeKernels kernels = KERNELS.get(isa);
        Matrix w = RandomMatrices.create(Layout.TILES_Q8, 40, 300, new Random(8));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> kernels.matmul(w, new float[300 * 2 - 1], new float[80], 2));
        assertTrue(e.getMessage().startsWith("x: needs 600 elements, has 599"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> kernels.matmul(w, new float[300], new float[39], 1));
        assertThrows(IllegalArgumentException.class, () -> kernels.matmul(w, new float[300], new float[40], 0));
        assertThrows(IllegalArgumentException.class, () -> kernels.row(w, 40, new float[300], 0));
        assertThrows(IllegalArgumentException.class, () -> kernels.row(w, 0, new float[300], 1));
        assertThrows(IllegalArgumentException.class,
                () -> kernels.rmsnorm(new float[10], new float[10], new float[4], 5, 2, 1e-5f));
        assertThrows(IllegalArgumentException.class, () -> kernels.siluMul(new float[3], new float[2], 3));
        Rope rope = Rope.of(Rope.Style.HALVES, 8, 8, 4, 10000);
        assertThrows(IllegalArgumentException.class, () -> kernels.rope(new float[16], 1, 2, 4, rope));
        AttentionShape shape = new AttentionShape(2, 1, 8, 0.35f);
        KvCache.Layer layer = new KvCache(1, 4, 8).layer(0);
        IllegalArgumentException tooFar = assertThrows(IllegalArgumentException.class,
                () -> kernels.attention(new float[16], new float[16], layer, 1, 4, shape));
        assertTrue(tooFar.getMessage().startsWith("keys: needs 40 elements, has 32"), tooFar.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void preparesOnlyPaddedQuantizedMatricesAndGivesTheSameProducts(Isa isa) {
        NativeKernels kernels = KERNELS.get(isa);
        Random random = new Random(9);
        Matrix padded = RandomMatrices.create(Layout.TILES_Q4_1, 70, 300, random);
        Matrix whole = RandomMatrices.create(Layout.TILES_Q8, 70, 512, random);
        float[] x = RandomMatrices.gaussian(300, random);
        float[] before = new float[70];
        try (NativeKernels fresh = NativeKernels.create(isa, 2)) {
            fresh.matmul(padded, x, before, 1);  // prepared on first use
        }
        // 3 tile rows × 10 groups of 640 bytes, against 3 × 2 tiles of 5120 in the container.
        assertEquals(3 * 10 * 640, kernels.prepare(padded));
        assertEquals(0, kernels.prepare(whole));
        assertEquals(0, kernels.prepare(RandomMatrices.create(Layout.BF16, 3, 300, random)));
        float[] after = new float[70];
        kernels.matmul(padded, x, after, 1);
        assertArrayEquals(before, after);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void refusesCallsOnceClosed(Isa isa) {
        NativeKernels kernels = NativeKernels.create(isa, 2);
        Matrix w = RandomMatrices.create(Layout.TILES_Q8, 32, 40, new Random(10));
        kernels.matmul(w, new float[40], new float[32], 1);
        kernels.close();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> kernels.matmul(w, new float[40], new float[32], 1));
        assertEquals(kernels.name() + " kernels are closed", e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void allocatesNothingOnTheJavaHeapPerCall(Isa isa) {
        NativeKernels kernels = KERNELS.get(isa);
        Random random = new Random(11);
        Matrix padded = RandomMatrices.create(Layout.TILES_Q8, 96, 288, random);
        Matrix whole = RandomMatrices.create(Layout.TILES_Q4_1, 64, 256, random);
        Matrix bf16 = RandomMatrices.create(Layout.BF16, 40, 288, random);
        float[] x = RandomMatrices.gaussian(288, random);
        float[] out = new float[288];
        float[] weight = RandomMatrices.gaussian(288, random);
        Rope rope = Rope.of(Rope.Style.INTERLEAVED, 48, 48, 16, 10000);
        AttentionShape shape = new AttentionShape(6, 6, 48, 0.14f);
        KvCache.Layer layer = new KvCache(1, 16, 288).layer(0);
        KvCache.Layer half = new KvCache(1, 16, 288, KvCache.Precision.F16).layer(0);
        Runnable step = () -> {
            kernels.rmsnorm(x, x, weight, 288, 1, 1e-5f);
            kernels.matmul(padded, x, out, 1);
            kernels.matmul(whole, x, out, 1);
            kernels.matmul(bf16, x, out, 1);
            kernels.rope(x, 1, 6, 3, rope);
            kernels.attention(out, x, layer, 1, 3, shape);
            kernels.attention(out, x, half, 1, 3, shape);
            kernels.siluMul(x, weight, 288);
            kernels.add(x, weight, 288);
            kernels.addBias(x, weight, 1);
            kernels.row(padded, 5, x, 0);
        };
        for (int i = 0; i < 2000; i++) {  // warm up: class loading, compact copies, compilation
            step.run();
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        threads.getCurrentThreadAllocatedBytes();  // its first call sets itself up, allocating
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 5000; i++) {
            step.run();
        }
        // An object per call would be 80 KB at least; the JVM itself now and then allocates a few hundred bytes on the
        // calling thread (seen: 848 once in a thousand steps), which is not the kernels' doing.
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 4096, allocated + " bytes allocated by 5000 decode steps");
    }

    private static double gamma(int n) {
        double u = Math.ulp(1.0f) / 2;
        return n * u / (1 - n * u);
    }

    private static void assertClose(float[] expected, float[] actual, double relative, double absolute, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            double bound = relative * Math.abs(expected[i]) + absolute;
            if (!(Math.abs(expected[i] - actual[i]) <= bound)) {
                fail(what + ": element " + i + " is " + actual[i] + ", reference " + expected[i]);
            }
        }
    }
}
