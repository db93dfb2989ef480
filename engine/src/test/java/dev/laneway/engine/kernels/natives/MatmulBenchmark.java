package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
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

/** Batched matrix products (prompt processing): {@link BenchmarkReport} turns the times into GFLOP/s. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MatmulBenchmark {
    @Param({"TILES_Q8", "TILES_Q4_1"})
    public String layout;

    @Param({"2048x2048", "8192x2048"})
    public String shape;

    @Param({"64"})
    public int batch;

    @Param({"2"})
    public int threads;

    private NativeKernels kernels;
    private Matrix w;
    private float[] x;
    private float[] out;

    @Setup(Level.Trial)
    public void setUp() {
        int rows = Integer.parseInt(shape.split("x")[0]);
        int cols = Integer.parseInt(shape.split("x")[1]);
        Random random = new Random(2);
        w = RandomMatrices.create(Layout.valueOf(layout), rows, cols, random);
        x = RandomMatrices.gaussian(batch * cols, random);
        out = new float[batch * rows];
        kernels = NativeKernels.create(threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public float matmul() {
        kernels.matmul(w, x, out, batch);
        return out[0];
    }
}
