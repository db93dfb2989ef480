package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Objects;
import java.util.Optional;
import org.bytedeco.javacpp.Loader;

/**
 * The native kernels: C++ compiled into the engine jar (JavaCPP), with code paths for AVX-512 VNNI, AVX2 and plain
 * x86-64, and a pool of worker threads for the matrix products and attention.
 *
 * <p>Weights are read in place from the matrix's direct (memory-mapped) buffer, in the container's tile layout; a
 * matrix on the Java heap is handled by the Java kernels instead. Quantized tiles (Q8, q4_1) go through int8 dot
 * products on the AVX-512 and AVX2 paths: activations are quantized per 32-column group, as llama.cpp does, so results
 * differ from {@link JavaKernels} by up to half a quantization step per activation.
 *
 * <p>Thread-safe: concurrent calls are allowed; while one call uses the pool, another runs on its caller's thread.
 * {@link #close()} stops the pool and must not overlap a call.
 */
public final class NativeKernels implements Kernels, AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final Isa isa;
    private final int threads;
    private final long pool;
    private final Cleaner.Cleanable cleanable;
    private final JavaKernels heapFallback = new JavaKernels();

    private final CompactCopies compact = new CompactCopies();
    private final WeightFootprint footprint;
    private volatile boolean closed;

    private NativeKernels(Isa isa, int threads, long cacheBytes) {
        this.isa = isa;
        this.threads = threads;
        this.footprint = new WeightFootprint(cacheBytes);
        long p = NativeLibrary.createPool(threads);
        this.pool = p;
        CompactCopies copies = compact;
        this.cleanable = CLEANER.register(this, () -> {
            NativeLibrary.destroyPool(p);
            copies.free();
        });
    }

    /** Why the native library cannot be used on this machine, or empty when it can. */
    public static Optional<String> loadProblem() {
        return Optional.ofNullable(Library.PROBLEM);
    }

    /** The best code path this CPU runs. */
    public static Isa bestIsa() {
        requireLoaded();
        return Isa.values()[NativeLibrary.bestIsa()];
    }

    /** Whether the CPU also has AVX-512 BF16 (for logs: the BF16 kernels widen to float and do not need it). */
    public static boolean cpuHasAvx512Bf16() {
        requireLoaded();
        return NativeLibrary.hasAvx512Bf16();
    }

    /** Kernels on the best code path with a pool of {@code threads} threads (the caller counts as one). */
    public static NativeKernels create(int threads) {
        return create(bestIsa(), threads);
    }

    /**
     * Kernels on a chosen code path, which the CPU must support (a lower one than the best is allowed, for testing and
     * for comparison).
     */
    public static NativeKernels create(Isa isa, int threads) {
        return create(isa, threads, NativeLibrary.lastLevelCacheBytes());
    }

    /** {@link #create(Isa, int)} for a given cache size (tests use a tiny one to read all weights as streamed). */
    static NativeKernels create(Isa isa, int threads, long cacheBytes) {
        Objects.requireNonNull(isa, "isa");
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("threads must be 1..1024, got " + threads);
        }
        Isa best = bestIsa();
        if (isa.compareTo(best) > 0) {
            throw new IllegalArgumentException("this CPU does not support the " + isa.label() + " kernels (best: "
                    + best.label() + ")");
        }
        return new NativeKernels(isa, threads, cacheBytes);
    }

    public Isa isa() {
        return isa;
    }

    public int threads() {
        return threads;
    }

    @Override
    public String name() {
        return "native-" + isa.label();
    }

    @Override
    public void matmul(Matrix w, float[] x, float[] out, int batch) {
        if (!w.data().isDirect()) {
            heapFallback.matmul(w, x, out, batch);
            return;
        }
        requireOpen();
        requireBatch(batch);
        requireLength("x", x, (long) batch * w.cols());
        requireLength("out", out, (long) batch * w.rows());
        boolean stage = footprint.streams(w);
        if (CompactCopies.worthIt(w)) {
            NativeLibrary.matmulCompact(pool, isa.ordinal(), w.layout().ordinal(), compact.of(w), w.rows(), w.cols(),
                    stage, x, out, batch);
        } else {
            NativeLibrary.matmul(pool, isa.ordinal(), w.layout().ordinal(), w.data(), w.rows(), w.cols(), false,
                    stage, x, out, batch);
        }
        Reference.reachabilityFence(this);  // the cleaner must not free the pool or the copies during the call
    }

    /**
     * Readies a weight matrix for {@link #matmul}, so that the first product does not pay for it; returns the bytes of
     * memory it took (0 for most matrices). A Q8 or q4_1 matrix whose columns are not a multiple of 256 is copied once
     * into a compact layout without the tiles' column padding: reading around the padding costs a third of the memory
     * bandwidth (32000 × 288 Q8: 12 GB/s of used bytes against 17 GB/s unpadded, one thread), and the copy is smaller
     * than the tiles. Other matrices are used in place. The copy lives as long as these kernels: use one instance per
     * loaded model and close it with the model. Thread-safe.
     *
     * <p>Preparing every matrix of a model at load also tells the kernels the model's size from the first token on:
     * weights that outgrow the last-level cache are read through a small buffer in L1 (see {@link WeightFootprint}),
     * weights that fit are read in place.
     */
    @Override
    public long prepare(Matrix w) {
        if (!w.data().isDirect()) {
            return 0;
        }
        footprint.streams(w);
        if (!CompactCopies.worthIt(w)) {
            return 0;
        }
        compact.of(w);
        return NativeLibrary.compactBytes(w.layout().ordinal(), w.rows(), w.cols());
    }

    @Override
    public void row(Matrix w, int row, float[] out, int offset) {
        if (!w.data().isDirect()) {
            heapFallback.row(w, row, out, offset);
            return;
        }
        if (row < 0 || row >= w.rows()) {
            throw new IllegalArgumentException(w.name() + ": row " + row + " outside 0.." + (w.rows() - 1));
        }
        if (offset < 0 || (long) offset + w.cols() > out.length) {
            throw new IllegalArgumentException("out: " + w.cols() + " elements at offset " + offset + " do not fit in "
                    + out.length);
        }
        NativeLibrary.row(w.layout().ordinal(), w.data(), w.cols(), row, out, offset);
    }

    @Override
    public void rmsnorm(float[] out, float[] x, float[] weight, int dim, int batch, float eps) {
        requireBatch(batch);
        requirePositive("dim", dim);
        requireLength("weight", weight, dim);
        requireLength("x", x, (long) dim * batch);
        requireLength("out", out, (long) dim * batch);
        NativeLibrary.rmsnorm(isa.ordinal(), out, x, weight, dim, batch, eps);
    }

    @Override
    public void rope(float[] x, int batch, int heads, int startPos, Rope rope) {
        requireBatch(batch);
        requirePositive("heads", heads);
        if (rope.rotaryDim() > rope.headDim() || rope.rotaryDim() % 2 != 0 || rope.rotaryDim() < 2) {
            throw new IllegalArgumentException("rope: rotary dim " + rope.rotaryDim() + " must be even and at most "
                    + "the head dim " + rope.headDim());
        }
        if (startPos < 0 || (long) startPos + batch > rope.positions()) {
            throw new IllegalArgumentException("rope: positions " + startPos + ".." + (startPos + batch - 1)
                    + " outside the tables' " + rope.positions());
        }
        requireLength("x", x, (long) batch * heads * rope.headDim());
        NativeLibrary.rope(isa.ordinal(), x, batch, heads, startPos, rope.headDim(), rope.rotaryDim(),
                rope.style() == Rope.Style.INTERLEAVED, rope.cos(), rope.sin());
    }

    @Override
    public void attention(float[] out, float[] q, KvCache.Layer cache, int batch, int startPos, AttentionShape shape) {
        requireOpen();
        if (cache.f16()) {
            dev.laneway.engine.kernels.HalfAttention.attend(out, q, cache, batch, startPos, shape);
            return;
        }
        requireBatch(batch);
        if (cache.kvDim() != shape.kvDim()) {
            throw new IllegalArgumentException("attention: cache kv dim " + cache.kvDim() + " but shape kv dim "
                    + shape.kvDim());
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("attention: negative start position " + startPos);
        }
        long positions = (long) startPos + batch;
        requireLength("keys", cache.keys(), positions * shape.kvDim());
        requireLength("values", cache.values(), positions * shape.kvDim());
        requireLength("q", q, (long) batch * shape.qDim());
        requireLength("out", out, (long) batch * shape.qDim());
        NativeLibrary.attention(pool, isa.ordinal(), out, q, cache.keys(), cache.values(), batch, startPos,
                shape.heads(), shape.kvHeads(), shape.headDim(), shape.scale());
        Reference.reachabilityFence(this);
    }

    @Override
    public void siluMul(float[] gate, float[] up, int n) {
        requireOpen();
        requireCount(n);
        requireLength("gate", gate, n);
        requireLength("up", up, n);
        NativeLibrary.siluMul(pool, isa.ordinal(), gate, up, n);
        Reference.reachabilityFence(this);
    }

    @Override
    public void add(float[] x, float[] y, int n) {
        requireCount(n);
        requireLength("x", x, n);
        requireLength("y", y, n);
        NativeLibrary.add(isa.ordinal(), x, y, n);
    }

    @Override
    public void addBias(float[] x, float[] bias, int batch) {
        requireBatch(batch);
        requireLength("x", x, (long) batch * bias.length);
        NativeLibrary.addBias(isa.ordinal(), x, bias, bias.length, batch);
    }

    /**
     * Reads a direct buffer (its first capacity / 64 · 64 bytes) on all threads as fast as possible and returns a
     * checksum: the memory bandwidth the matrix products are measured against.
     */
    public long streamRead(java.nio.ByteBuffer data) {
        requireOpen();
        if (!data.isDirect()) {
            throw new IllegalArgumentException("streamRead needs a direct buffer");
        }
        long checksum = NativeLibrary.streamRead(pool, isa.ordinal(), data.duplicate().position(0),
                data.capacity() & ~63L);
        Reference.reachabilityFence(this);
        return checksum;
    }

    /** Stops the worker threads. No call may be in flight or follow. */
    @Override
    public void close() {
        closed = true;
        cleanable.clean();
    }

    @Override
    public String toString() {
        return name() + " (" + threads + " threads)";
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(name() + " kernels are closed");
        }
    }

    private static void requireBatch(int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be positive, got " + batch);
        }
    }

    private static void requirePositive(String what, int n) {
        if (n < 1) {
            throw new IllegalArgumentException(what + " must be positive, got " + n);
        }
    }

    private static void requireCount(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must not be negative, got " + n);
        }
    }

    private static void requireLength(String what, float[] a, long needed) {
        if (a.length < needed) {
            throw new IllegalArgumentException(what + ": needs " + needed + " elements, has " + a.length);
        }
    }

    private static void requireLoaded() {
        if (Library.PROBLEM != null) {
            throw new IllegalStateException("native kernels unavailable: " + Library.PROBLEM);
        }
    }

    /** Loads the library once, remembering why it failed. */
    private static final class Library {
        static final String PROBLEM = load();

        private static String load() {
            try {
                Loader.load(NativeLibrary.class);
                return null;
            } catch (Throwable t) {  // UnsatisfiedLinkError for an unsupported platform, or a broken extraction
                String message = String.valueOf(t.getMessage());
                if (t instanceof UnsatisfiedLinkError && message.startsWith("no jniNativeLibrary")) {
                    return "this jar has no native kernels for " + Loader.getPlatform();
                }
                return Loader.getPlatform() + ": " + t;
            }
        }
    }
}
