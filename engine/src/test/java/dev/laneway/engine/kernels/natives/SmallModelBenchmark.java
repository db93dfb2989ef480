package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Rope;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Per-call cost where calls are small: an empty call, a 288 × 288 product, and one decode step's worth of kernel calls
 * for a small llama (dim 288, 6 layers, 6 heads, ffn 768, vocab 32000, position 128), the sequence a forward pass makes.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SmallModelBenchmark {
    private static final int DIM = 288;
    private static final int FFN = 768;
    private static final int LAYERS = 6;
    private static final int HEADS = 6;
    private static final int POSITION = 128;

    @Param({"TILES_Q8", "TILES_Q4_1"})
    public String layout;

    @Param({"2"})
    public int threads;

    private NativeKernels kernels;
    private Matrix[][] layers;
    private Matrix classifier;
    private float[] norm;
    private float[] x;
    private float[] xb;
    private float[] q;
    private float[] k;
    private float[] v;
    private float[] att;
    private float[] hb;
    private float[] hb2;
    private float[] logits;
    private float[] tiny;
    private Rope rope;
    private KvCache cache;
    private AttentionShape shape;

    @Setup(Level.Trial)
    public void setUp() {
        Random random = new Random(3);
        Layout l = Layout.valueOf(layout);
        layers = new Matrix[LAYERS][];
        for (int i = 0; i < LAYERS; i++) {
            layers[i] = new Matrix[] {
                RandomMatrices.create(l, DIM, DIM, random), RandomMatrices.create(l, DIM, DIM, random),
                RandomMatrices.create(l, DIM, DIM, random), RandomMatrices.create(l, DIM, DIM, random),
                RandomMatrices.create(l, FFN, DIM, random), RandomMatrices.create(l, FFN, DIM, random),
                RandomMatrices.create(l, DIM, FFN, random)};
        }
        classifier = RandomMatrices.create(l, 32000, DIM, random);
        norm = RandomMatrices.gaussian(DIM, random);
        x = RandomMatrices.gaussian(DIM, random);
        xb = new float[DIM];
        q = new float[DIM];
        k = new float[DIM];
        v = new float[DIM];
        att = new float[DIM];
        hb = new float[FFN];
        hb2 = new float[FFN];
        logits = new float[32000];
        tiny = new float[16];
        shape = new AttentionShape(HEADS, HEADS, DIM / HEADS, (float) (1 / Math.sqrt(DIM / HEADS)));
        rope = Rope.of(Rope.Style.INTERLEAVED, DIM / HEADS, DIM / HEADS, 256, 10000);
        cache = new KvCache(LAYERS, 256, DIM);
        for (int i = 0; i < LAYERS; i++) {
            float[] kv = RandomMatrices.gaussian(POSITION * DIM, random);
            cache.layer(i).store(kv, kv, POSITION, 0);
        }
        kernels = NativeKernels.create(threads);
        for (Matrix[] layer : layers) {
            for (Matrix w : layer) {
                kernels.prepare(w);  // as a loader does: compact copies of the padded matrices, made before the first token
            }
        }
        kernels.prepare(classifier);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public float emptyCall() {
        kernels.add(tiny, tiny, 0);
        return tiny[0];
    }

    @Benchmark
    public float matvec288() {
        kernels.matmul(layers[0][0], x, q, 1);
        return q[0];
    }

    @Benchmark
    public float decodeStep() {
        for (int i = 0; i < LAYERS; i++) {
            Matrix[] w = layers[i];
            kernels.rmsnorm(xb, x, norm, DIM, 1, 1e-5f);
            kernels.matmul(w[0], xb, q, 1);
            kernels.matmul(w[1], xb, k, 1);
            kernels.matmul(w[2], xb, v, 1);
            kernels.rope(q, 1, HEADS, POSITION, rope);
            kernels.rope(k, 1, HEADS, POSITION, rope);
            cache.layer(i).store(k, v, 1, POSITION);
            kernels.attention(att, q, cache.layer(i), 1, POSITION, shape);
            kernels.matmul(w[3], att, xb, 1);
            kernels.add(x, xb, DIM);
            kernels.rmsnorm(xb, x, norm, DIM, 1, 1e-5f);
            kernels.matmul(w[4], xb, hb, 1);
            kernels.matmul(w[5], xb, hb2, 1);
            kernels.siluMul(hb, hb2, FFN);
            kernels.matmul(w[6], hb, xb, 1);
            kernels.add(x, xb, DIM);
        }
        kernels.rmsnorm(x, x, norm, DIM, 1, 1e-5f);
        kernels.matmul(classifier, x, logits, 1);
        return logits[0];
    }
}
