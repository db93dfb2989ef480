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

/**
 * Matrix-vector products (decode) at the shapes of a 1B model (rows × cols). Enough copies of the matrix are cycled
 * through that they cannot stay in the last-level cache, so the weights stream from memory as in a real forward pass.
 * {@link BenchmarkReport} turns the times into GB/s of weights read.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MatvecBenchmark {
    /** Bytes of weights cycled through: several times any last-level cache. */
    static final long WORKING_SET = 1L << 30;

    @Param({"TILES_Q8", "TILES_Q4_1"})
    public String layout;

    @Param({"2048x2048", "2048x8192", "8192x2048", "32000x2048"})
    public String shape;

    @Param({"2"})
    public int threads;

    /** Rows of activations per product: 1 is one sequence's decode step, more are the steps of a batch. */
    @Param({"1"})
    public int batch;

    /** How the streamed weights are read: both ways, to see which this CPU prefers. */
    @Param({"STAGED", "PREFETCHED", "PREFETCHED_TO_L2"})
    public String streaming;

    private NativeKernels kernels;
    private Matrix[] copies;
    private float[] x;
    private float[] out;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        int rows = Integer.parseInt(shape.split("x")[0]);
        int cols = Integer.parseInt(shape.split("x")[1]);
        Layout l = Layout.valueOf(layout);
        int n = (int) Math.max(1, WORKING_SET / l.bytes(rows, cols));
        copies = new Matrix[n];
        Random random = new Random(1);
        for (int i = 0; i < n; i++) {
            copies[i] = RandomMatrices.create(l, rows, cols, random);
        }
        x = RandomMatrices.gaussian(batch * cols, random);
        out = new float[batch * rows];
        kernels = NativeKernels.create(NativeCpu.bestIsa(), threads, NativeLibrary.lastLevelCacheBytes(),
                Streaming.valueOf(streaming));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public float matvec() {
        Matrix w = copies[next];
        next = next + 1 == copies.length ? 0 : next + 1;
        kernels.matmul(w, x, out, batch);
        return out[0];
    }
}
