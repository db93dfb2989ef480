package dev.laneway.engine.kernels.natives;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.LayerWeights;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Rope;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Layers whose streamed Q8 and q4_1 matrices (read prefetched or staged) are copied in the background on AVX-512
 * ({@link BackgroundCopies}): they give the same bits before and after the switch, the switch happens (on AVX-512),
 * and the tiles the copies replace (whose pages are given back when they are a file mapping) still read as they were,
 * from a file or from the process's own memory.
 */
class BackgroundCopiesTest {
    // Columns a multiple of 256: narrower matrices get a compact copy at once (in the lanes layout on AVX-512) instead
    private static final int HIDDEN = 256;
    private static final int FFN = 512;
    private static final AttentionShape ATTENTION = new AttentionShape(4, 2, 64, (float) (1 / Math.sqrt(64)));
    private static final LayerShape SHAPE = new LayerShape(HIDDEN, ATTENTION, FFN, 1e-5f);
    private static final Rope ROPE = Rope.of(Rope.Style.HALVES, 64, 64, 64, 10000);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"TILES_Q4_1,PREFETCHED", "TILES_Q8,PREFETCHED", "TILES_Q4_1,STAGED", "TILES_Q8,STAGED",
            "TILES_Q8,PREFETCHED_TO_L2", "TILES_Q4_K,PREFETCHED", "TILES_Q4_K,STAGED"})
    void aStreamedLayerGivesTheSameBitsFromItsCopies(Layout layout, Streaming streaming) throws IOException {
        LayerWeights inMemory = RandomMatrices.layer(layout, SHAPE, new Random(layout.ordinal()));
        LayerWeights mapped = mapped(inMemory);
        float[] x = RandomMatrices.gaussian(3 * HIDDEN, new Random(9));
        float[][] before = new float[2][];
        float[] reference;
        try (NativeKernels inPlace = NativeKernels.create(NativeCpu.bestIsa(), 2)) {
            reference = run(inPlace, inPlace.fuse(inMemory, SHAPE, ROPE), x);
        }
        List<LayerWeights> both = List.of(inMemory, mapped);
        for (int i = 0; i < 2; i++) {
            LayerWeights weights = both.get(i);
            float[] tilesBefore = product(weights.gate());
            try (NativeKernels streamed = NativeKernels.create(NativeCpu.bestIsa(), 2, 1, streaming)) {
                weights.matrices().forEach(streamed::prepare);
                FusedLayer fused = streamed.fuse(weights, SHAPE, ROPE);
                before[i] = run(streamed, fused, x);  // from the tiles or the copies, whichever is in use by now
                assertTrue(streamed.awaitCopies(WAIT), "the background copies finish");
                boolean copied = streamed.isa() == Isa.AVX512;
                assertEquals(copied, fused.readsCopies, layout + " " + streaming + " on " + streamed.isa());
                assertArrayEquals(before[i], run(streamed, fused, x), "the same bits from the copies");
            }
            assertArrayEquals(tilesBefore, product(weights.gate()), "the replaced tiles read as before");
        }
        assertArrayEquals(reference, before[0], "streamed tiles give the in-place bits");
        assertArrayEquals(before[0], before[1], "mapped weights give the in-memory ones' bits");
    }

    /** The per-op forward's products switch to a copy too, made after their first product, with the same bits. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"TILES_Q4_1,PREFETCHED", "TILES_Q8,STAGED", "TILES_Q4_K,PREFETCHED_TO_L2", "TILES_Q4_K,STAGED"})
    void aStreamedProductGivesTheSameBitsFromItsCopy(Layout layout, Streaming streaming) throws IOException {
        Matrix m = mapped(RandomMatrices.layer(layout, SHAPE, new Random(5))).gate();
        float[] x = RandomMatrices.gaussian(2 * m.cols(), new Random(6));
        try (NativeKernels kernels = NativeKernels.create(NativeCpu.bestIsa(), 2, 1, streaming)) {
            kernels.prepare(m);
            // one row (read as `streaming` says) and two (a batch is read prefetched rather than staged)
            float[][] before = {new float[m.rows()], new float[2 * m.rows()]};
            for (int batch = 1; batch <= 2; batch++) {
                kernels.matmul(m, x, before[batch - 1], batch);
            }
            assertTrue(kernels.awaitCopies(WAIT), "the background copies finish");
            assertEquals(kernels.isa() == Isa.AVX512, kernels.productReadsCopy(m), layout + " " + streaming);
            for (int batch = 1; batch <= 2; batch++) {
                float[] after = new float[batch * m.rows()];
                kernels.matmul(m, x, after, batch);
                assertArrayEquals(before[batch - 1], after, "the same bits from the copy, batch " + batch);
            }
        }
    }

    /** A layer on three tokens (positions 0-2) from a fresh cache: the updated residual stream. */
    private static float[] run(NativeKernels kernels, FusedLayer layer, float[] x) {
        float[] out = x.clone();
        KvCache cache = new KvCache(1, 64, ATTENTION.kvHeads() * ATTENTION.headDim());
        kernels.runLayer(layer, out, new float[(int) SHAPE.workFloats(3)], cache.layer(0), 3, 0);
        return out;
    }

    /** m times a fixed vector, by fresh kernels reading m's tiles. */
    private static float[] product(Matrix m) {
        float[] x = RandomMatrices.gaussian(m.cols(), new Random(4));
        float[] out = new float[m.rows()];
        try (NativeKernels kernels = NativeKernels.create(NativeCpu.bestIsa(), 1)) {
            kernels.matmul(m, x, out, 1);
        }
        return out;
    }

    /** The same layer with its matrices read from a file, each mapped on its own as a container's tensors are. */
    private LayerWeights mapped(LayerWeights w) throws IOException {
        Path file = dir.resolve("layer.bin");
        List<long[]> spans = new ArrayList<>();
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            for (Matrix m : w.matrices()) {
                long at = (out.position() + 4095) / 4096 * 4096 + 64;  // not page aligned, as tensors need not be
                out.position(at);
                ByteBuffer data = m.data().duplicate();
                spans.add(new long[] {at, data.remaining()});
                while (data.hasRemaining()) {
                    out.write(data);
                }
            }
        }
        List<Matrix> maps = new ArrayList<>();
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            int i = 0;
            for (Matrix m : w.matrices()) {
                long[] span = spans.get(i++);
                maps.add(new Matrix(m.name(), m.layout(), m.rows(), m.cols(),
                        in.map(FileChannel.MapMode.READ_ONLY, span[0], span[1])));
            }
        }
        assertTrue(Files.size(file) > 0);
        return new LayerWeights(w.attnNorm(), maps.get(0), maps.get(1), maps.get(2), Optional.empty(),
                Optional.empty(), maps.get(3), w.ffnNorm(), maps.get(4), maps.get(5), maps.get(6));
    }
}
