package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Rope;
import java.time.Duration;
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
 * The layers of one decode step of the 1B shape (hidden 2048, 16 layers, 32 heads of 64 with 8 KV heads, ffn 8192)
 * over {@code rows} sequences, each one row at {@code position} in its own cache slot: the fused layers as a server's
 * batched step runs them, products and attention together. The weights (1.1 GB at Q8) stream from memory, read as
 * the CPU prefers, from the copies made in the background (waited for); the cache is half precision, as served. With
 * {@code adapters}, the rows apply LoRA adapters, spread over them, as a batch of requests for several adapters does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class DecodeStepBenchmark {
    private static final int HIDDEN = 2048;
    private static final int LAYERS = 16;
    private static final int FFN = 8192;
    private static final AttentionShape ATTENTION = new AttentionShape(32, 8, 64, (float) (1 / Math.sqrt(64)));
    private static final LayerShape SHAPE = new LayerShape(HIDDEN, ATTENTION, FFN, 1e-5f);

    @Param({"TILES_Q8", "TILES_Q4_1"})
    public String layout;

    /** Sequences decoding in the step, a row each. */
    @Param({"1", "4", "8"})
    public int rows;

    /** Each sequence's position: how much of its cache attention reads. */
    @Param({"250"})
    public int position;

    @Param({"2"})
    public int threads;

    /**
     * LoRA adapters (rank 16 on every projection, half precision as llama.cpp's converter writes them) the rows apply,
     * row r adapter r mod adapters; 0: the base model alone.
     */
    @Param({"0", "4"})
    public int adapters;

    private static final int RANK = 16;

    private NativeKernels kernels;
    private FusedLayer[] layers;
    private KvCache cache;
    private float[] input;
    private float[] x;
    private float[] work;
    private int[] segments;
    /** Per layer: the LoRA jobs' fields and rows' scales, and how many. */
    private long[][] lora;
    private float[][] loraScales;
    private int loraCount;
    /** Keeps the adapters' memory while the jobs point into it. */
    private final java.util.List<java.nio.ByteBuffer> adapterMemory = new java.util.ArrayList<>();

    @Setup(Level.Trial)
    public void setUp() {
        kernels = NativeKernels.create(NativeCpu.bestIsa(), threads);
        Random random = new Random(1);
        Layout l = Layout.valueOf(layout);
        Rope rope = Rope.of(Rope.Style.HALVES, 64, 64, position + 1, 10000);
        layers = new FusedLayer[LAYERS];
        for (int i = 0; i < LAYERS; i++) {
            layers[i] = kernels.fuse(RandomMatrices.layer(l, SHAPE, random), SHAPE, rope);
        }
        if (!kernels.awaitCopies(Duration.ofMinutes(5))) {
            throw new IllegalStateException("the weight copies were not made within 5 minutes");
        }
        cache = KvCache.onDemand(LAYERS, position + 1, ATTENTION.kvDim(), KvCache.Precision.F16, rows);
        cache.reserve(position + 1);
        input = RandomMatrices.gaussian(rows * HIDDEN, random);
        x = new float[input.length];
        work = new float[(int) SHAPE.workFloats(rows)];
        segments = new int[4 * rows];
        for (int s = 0; s < rows; s++) {
            segments[4 * s] = s;
            segments[4 * s + 1] = 1;
            segments[4 * s + 2] = position;
            segments[4 * s + 3] = cache.layer(0).base(s);
        }
        int[] ins = SHAPE.projectionInputs();
        int[] outs = SHAPE.projectionOutputs();
        loraCount = adapters * 7;
        lora = new long[LAYERS][loraCount * NativeKernels.LORA_FIELDS];
        loraScales = new float[LAYERS][loraCount * rows];
        for (int i = 0; i < LAYERS; i++) {
            for (int a = 0; a < adapters; a++) {
                for (int t = 0; t < 7; t++) {
                    int job = a * 7 + t;
                    int at = job * NativeKernels.LORA_FIELDS;
                    lora[i][at] = t;
                    kernels.loraMatrix(half("A", RANK, ins[t], random), lora[i], at + 1);
                    kernels.loraMatrix(half("Bt", RANK, outs[t], random), lora[i], at + 8);
                    for (int r = 0; r < rows; r++) {
                        loraScales[i][job * rows + r] = r % adapters == a ? 0.5f : 0f;
                    }
                }
            }
        }
    }

    private dev.laneway.engine.kernels.Matrix half(String name, int rowCount, int cols, Random random) {
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocateDirect(2 * rowCount * cols)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < rowCount * cols; i++) {
            data.putShort(dev.laneway.engine.kernels.Floats.floatToF16((float) random.nextGaussian() * 0.02f));
        }
        adapterMemory.add(data);
        return new dev.laneway.engine.kernels.Matrix(name, Layout.F16, rowCount, cols, data.flip());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public float step() {
        System.arraycopy(input, 0, x, 0, x.length);  // the same step every time, the residual stream never growing
        for (int i = 0; i < LAYERS; i++) {
            kernels.runLayer(layers[i], x, work, cache.layer(i), rows, segments, rows, lora[i], loraScales[i],
                    loraCount);
        }
        return x[0];
    }
}
