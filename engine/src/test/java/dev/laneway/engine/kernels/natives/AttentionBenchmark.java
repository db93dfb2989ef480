package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.KvCache;
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
 * One layer's attention for a prompt continued after a history (a conversation's next turn): {@code batch} rows, each
 * attending to the {@code history} positions before the batch and to the batch's rows up to its own, over the
 * half-precision KV cache, at the 1B shape's heads (32 query heads, 8 KV heads of 64). Run with JMH's main, e.g.
 * {@code -p history=200,1800 -p batch=1,264}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AttentionBenchmark {
    @Param({"1800"})
    public int history;

    @Param({"264"})
    public int batch;

    @Param({"2"})
    public int threads;

    private final AttentionShape shape = new AttentionShape(32, 8, 64, 0.125f);
    private NativeKernels kernels;
    private KvCache.Layer layer;
    private float[] q;
    private float[] out;

    @Setup(Level.Trial)
    public void setUp() {
        int positions = history + batch;
        layer = new KvCache(1, positions, shape.kvDim(), KvCache.Precision.F16).layer(0);
        Random random = new Random(1);
        layer.store(RandomMatrices.gaussian(positions * shape.kvDim(), random),
                RandomMatrices.gaussian(positions * shape.kvDim(), random), positions, 0);
        q = RandomMatrices.gaussian(batch * shape.qDim(), random);
        out = new float[batch * shape.qDim()];
        kernels = NativeKernels.create(NativeCpu.bestIsa(), threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public float attention() {
        kernels.attention(out, q, layer, batch, history, shape);
        return out[0];
    }
}
