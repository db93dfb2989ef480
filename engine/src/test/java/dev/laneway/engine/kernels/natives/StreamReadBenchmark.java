package dev.laneway.engine.kernels.natives;

import java.nio.ByteBuffer;
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

/** The machine's streaming read bandwidth, on the same thread pool: the ceiling for a matrix-vector product. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class StreamReadBenchmark {
    @Param({"2"})
    public int threads;

    private NativeKernels kernels;
    private ByteBuffer data;

    @Setup(Level.Trial)
    public void setUp() {
        data = ByteBuffer.allocateDirect((int) MatvecBenchmark.WORKING_SET + 64).alignedSlice(64);
        for (int i = 0; i < data.capacity(); i += 4096) {
            data.put(i, (byte) i);  // touch every page
        }
        kernels = NativeKernels.create(threads);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        kernels.close();
    }

    @Benchmark
    public long read() {
        return kernels.streamRead(data);
    }
}
