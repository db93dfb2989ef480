package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.LayerWeights;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

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
    /** Longs describing a matrix to the fused kernels: layout, address, rows, cols, compact, lanes, streaming. */
    private static final int MATRIX_FIELDS = 7;
    /** How long closing waits for a background copy in progress (one matrix takes milliseconds). */
    private static final Duration STOP_COPIES = Duration.ofMinutes(1);
    /** Longer than a product takes: after it, no product reads tiles replaced before it began. */
    private static final Duration SETTLE = Duration.ofMillis(200);

    private final Isa isa;
    private final int threads;
    private final Streaming streaming;
    private final long pool;
    private final Cleaner.Cleanable cleanable;
    private final JavaKernels heapFallback = new JavaKernels();

    /** Copies of matrices in other layouts, in one native arena freed with the pool. */
    private final CompactCopies compact;
    private final CompactCopies lanes;
    /** Lanes copies of streamed Q8 and q4_1 matrices, made after loading by {@link #background}. */
    private final CompactCopies laterLanes;
    private final BackgroundCopies background = new BackgroundCopies();
    /** The tiles last given back, to give back again (see {@link #switchToCopy}); the copies' thread's own. */
    private Matrix releasedLast;
    /** Streamed tile matrices the products of {@link #matmul} have asked a lanes copy for, made by {@link #background}. */
    private final Set<Matrix> productCopies = Collections.synchronizedSet(Collections.newSetFromMap(
            new IdentityHashMap<>()));
    private final FusedParts fused = new FusedParts();
    private final WeightFootprint footprint;
    private volatile boolean closed;

    private NativeKernels(Isa isa, int threads, long cacheBytes, Streaming streaming) {
        this.isa = isa;
        this.threads = threads;
        this.streaming = streaming;
        this.footprint = new WeightFootprint(cacheBytes);
        long p = NativeLibrary.createPool(threads);
        this.pool = p;
        long a = NativeLibrary.createArena();
        // On AVX-512 the compact copies are made in the lanes layout, which has compact addressing too
        CompactCopies copies = new CompactCopies((layout, tiles, rows, cols) -> isa == Isa.AVX512
                ? NativeLibrary.repackLanes(p, a, layout, tiles, rows, cols)
                : NativeLibrary.repackCompact(a, layout, tiles, rows, cols));
        CompactCopies laneCopies = new CompactCopies((layout, tiles, rows, cols) ->
                NativeLibrary.repackLanes(p, a, layout, tiles, rows, cols));
        long single = NativeLibrary.createPool(1);  // the background copies' own: the pool is for serving
        CompactCopies laterCopies = new CompactCopies((layout, tiles, rows, cols) ->
                NativeLibrary.repackLanes(single, a, layout, tiles, rows, cols));
        this.compact = copies;
        this.lanes = laneCopies;
        this.laterLanes = laterCopies;
        FusedParts parts = fused;
        BackgroundCopies copier = background;
        this.cleanable = CLEANER.register(this, () -> {
            if (!copier.stop(STOP_COPIES)) {
                return;  // a copy is still being written: leave its memory rather than free it under it
            }
            NativeLibrary.destroyPool(p);
            NativeLibrary.destroyPool(single);
            parts.free();
            copies.free();
            laneCopies.free();
            laterCopies.free();
            NativeLibrary.destroyArena(a);
        });
    }

    /**
     * Kernels on the best code path with a pool of {@code threads} threads (the caller counts as one), reading
     * streamed weights as {@link Streaming#PROPERTY} says, else as this CPU prefers.
     */
    public static NativeKernels create(int threads) {
        return create(NativeCpu.bestIsa(), threads);
    }

    /**
     * Kernels on a chosen code path, which the CPU must support (a lower one than the best is allowed, for testing and
     * for comparison).
     */
    public static NativeKernels create(Isa isa, int threads) {
        return create(isa, threads, NativeCpu.lastLevelCacheBytes(),
                Streaming.configured().orElseGet(NativeCpu::preferredStreaming));
    }

    /**
     * {@link #create(Isa, int)} for a given cache size (tests use a tiny one to read all weights as streamed) and a
     * given way of reading streamed weights (for tests and benchmarks).
     */
    static NativeKernels create(Isa isa, int threads, long cacheBytes, Streaming streaming) {
        Objects.requireNonNull(isa, "isa");
        Objects.requireNonNull(streaming, "streaming");
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("threads must be 1..1024, got " + threads);
        }
        Isa best = NativeCpu.bestIsa();
        if (isa.compareTo(best) > 0) {
            throw new IllegalArgumentException("this CPU does not support the " + isa.label() + " kernels (best: "
                    + best.label() + ")");
        }
        return new NativeKernels(isa, threads, cacheBytes, streaming);
    }

    public Isa isa() {
        return isa;
    }

    /** How these kernels read weights once the model outgrows the last-level cache. */
    public Streaming streaming() {
        return streaming;
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
        int reading = readingOf(w).ordinal();
        if (laterLanes.has(w)) {
            NativeLibrary.matmulCompact(pool, isa.ordinal(), w.layout().ordinal(), laterLanes.of(w), w.rows(),
                    w.cols(), true, reading, x, out, batch);
        } else if (CompactCopies.worthIt(w)) {
            NativeLibrary.matmulCompact(pool, isa.ordinal(), w.layout().ordinal(), compactCopy(w), w.rows(), w.cols(),
                    isa == Isa.AVX512, reading, x, out, batch);
        } else {
            NativeLibrary.matmul(pool, isa.ordinal(), w.layout().ordinal(), w.data(), w.rows(), w.cols(), false,
                    reading, x, out, batch);
            if (copiedLater(w) && productCopies.add(w)) {
                // as a fused layer's: copied in the background, read from the next product on, the tiles given back
                background.submit(() -> {
                    if (!closed) {
                        switchToCopy(w, () -> { });
                    }
                });
            }
        }
        Reference.reachabilityFence(this);  // the cleaner must not free the pool or the copies during the call
    }

    /**
     * Readies a weight matrix for {@link #matmul}, so that the first product does not pay for it; returns the bytes of
     * memory it took (0 for most matrices). A Q8 or q4_1 matrix whose columns are not a multiple of 256 is copied once
     * into a compact layout without the tiles' column padding (on AVX-512, the lanes layout, which is compact too and
     * spares the products the transposition of every group): reading around the padding costs a third of the memory
     * bandwidth (docs/performance.md), and the copy is smaller
     * than the tiles. Other matrices are used in place. The copy lives as long as these kernels: use one instance per
     * loaded model and close it with the model. Thread-safe.
     *
     * <p>Preparing every matrix of a model at load also tells the kernels the model's size from the first token on:
     * weights that outgrow the last-level cache are read as {@link #streaming()} says (see {@link WeightFootprint}),
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
        compactCopy(w);
        return NativeLibrary.compactBytes(w.layout().ordinal(), w.rows(), w.cols());
    }

    /**
     * The compact copy of w, made on first use. Making it reads every tile; the products read the copy only, so the
     * tiles' pages are given back then rather than kept resident beside it (a row lookup reads them back from the page
     * cache).
     */
    private long compactCopy(Matrix w) {
        boolean made = !compact.has(w);
        long address = compact.of(w);
        if (made) {
            releaseMapped(w);
        }
        return address;
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
    public void rope(float[] x, int firstRow, int batch, int heads, int startPos, Rope rope) {
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
        requireNonNegative("first row", firstRow);
        long rowWidth = (long) heads * rope.headDim();
        requireLength("x", x, (firstRow + (long) batch) * rowWidth);
        NativeLibrary.rope(isa.ordinal(), x, (int) (firstRow * rowWidth), batch, heads, startPos, rope.headDim(),
                rope.rotaryDim(), rope.style() == Rope.Style.INTERLEAVED, rope.cos(), rope.sin());
    }

    /**
     * Attention over the cache. A half-precision cache is read with llama.cpp's numerics, as {@code HalfAttention}
     * (the reference) does: the query rounded to half precision, scores summed in float, the weighted values
     * accumulated in half precision.
     */
    @Override
    public void attention(float[] out, float[] q, int firstRow, int batch, KvCache.Layer cache, int slot,
                          int startPos, AttentionShape shape) {
        requireOpen();
        requireBatch(batch);
        requireNonNegative("first row", firstRow);
        if (cache.kvDim() != shape.kvDim()) {
            throw new IllegalArgumentException("attention: cache kv dim " + cache.kvDim() + " but shape kv dim "
                    + shape.kvDim());
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("attention: negative start position " + startPos);
        }
        long end = cache.base(slot) + ((long) startPos + batch) * shape.kvDim();
        long rows = firstRow + (long) batch;
        requireLength("q", q, rows * shape.qDim());
        requireLength("out", out, rows * shape.qDim());
        int rowOffset = firstRow * shape.qDim();
        int kvOffset = cache.base(slot);
        if (cache.precision() == KvCache.Precision.Q8) {
            requireLength("keys", cache.elements(), end);
            if (cache.headDim() != shape.headDim()) {  // the rotation of keys and values is the head's
                throw new IllegalArgumentException("attention: heads of " + shape.headDim()
                        + " over an eight-bit cache of heads of " + cache.headDim());
            }
            NativeLibrary.attentionQ8(pool, isa.ordinal(), out, q, rowOffset, cache.keys8(), cache.values8(),
                    kvOffset, batch, startPos, shape.heads(), shape.kvHeads(), shape.headDim(), shape.scale(),
                    shape.window(), shape.softcap());
        } else if (cache.f16()) {
            requireLength("keys", cache.keys16().length, end);
            requireLength("values", cache.values16().length, end);
            NativeLibrary.attentionHalf(pool, isa.ordinal(), out, q, rowOffset, cache.keys16(), cache.values16(),
                    kvOffset, batch, startPos, shape.heads(), shape.kvHeads(), shape.headDim(), shape.scale(),
                    shape.window(), shape.softcap());
        } else {
            requireLength("keys", cache.keys().length, end);
            requireLength("values", cache.values().length, end);
            NativeLibrary.attention(pool, isa.ordinal(), out, q, rowOffset, cache.keys(), cache.values(), kvOffset,
                    batch, startPos, shape.heads(), shape.kvHeads(), shape.headDim(), shape.scale(),
                    shape.window(), shape.softcap());
        }
        Reference.reachabilityFence(this);
    }

    /** GeGLU's product, from the same half-precision table as {@link dev.laneway.engine.kernels.Gelu}. */
    @Override
    public void geluMul(float[] gate, float[] up, int n) {
        requireOpen();
        requireCount(n);
        requireLength("gate", gate, n);
        requireLength("up", up, n);
        NativeLibrary.geluMul(pool, isa.ordinal(), gate, up, n);
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
     * Readies a transformer layer for {@link #runLayer}: its matrices are prepared (see {@link #prepare}) and their
     * addresses, with copies of the small vectors and the shape, go to native memory, freed when these kernels close.
     * Prepare every matrix of the model before fusing, as a loader does, so that what is decided from the model's
     * size sees all of it.
     *
     * <p>On the AVX-512 path, tiled matrices (Q8, q4_1, Q4_K) get a copy in the lanes layout: each 32×32 group stored
     * in the order the VNNI product consumes it, so that products load groups instead of transposing each one again on
     * every token (the 1B shape decoded 11% faster from copies at q4_1, whose nibbles make the most of that work, and
     * 7–15% at Q8, read prefetched; 10–11% at both, read staged). A model that fits in the last-level cache is copied here,
     * on the pool. A model whose weights stream from memory (read prefetched or staged, {@link Streaming}) is copied
     * after this returns, in the background ({@link BackgroundCopies}, see
     * {@link #awaitCopies}), the layer switching to each copy as it is made; the tiles' pages are then given back when
     * they are a file mapping, so that the copy does not double the resident memory. The copy holds the same codes
     * and scales, so products give the same bits.
     *
     * @throws IllegalArgumentException when a size does not fit the shape, or a matrix is not in a direct buffer
     */
    public FusedLayer fuse(LayerWeights weights, LayerShape shape, Rope rope) {
        requireOpen();
        weights.check(shape);
        AttentionShape a = shape.attention();
        if (rope.headDim() != a.headDim()) {
            throw new IllegalArgumentException("rope tables for head dim " + rope.headDim() + ", layer has "
                    + a.headDim());
        }
        FusedLayer layer = new FusedLayer(this, layerHandle(weights, shape, rope), weights, shape, rope);
        List<Matrix> later = weights.matrices().stream().filter(this::copiedLater).toList();
        if (!later.isEmpty()) {
            background.submit(() -> {
                // A matrix at a time, each switched to as soon as it is copied and its tiles then given back: the
                // tiles and the copies of a whole layer are never resident together.
                for (Matrix m : later) {
                    if (closed) {
                        return;
                    }
                    switchToCopy(m, () -> layer.handle = layerHandle(weights, shape, rope));
                }
                layer.readsCopies = true;
            });
        }
        Reference.reachabilityFence(this);
        return layer;
    }

    /** A native fused layer reading the copies made so far. */
    private long layerHandle(LayerWeights weights, LayerShape shape, Rope rope) {
        AttentionShape a = shape.attention();
        long[] matrices = new long[MATRIX_FIELDS * 7];
        int j = 0;
        for (Matrix m : weights.matrices()) {
            System.arraycopy(describe(m), 0, matrices, MATRIX_FIELDS * j++, MATRIX_FIELDS);
        }
        float[] none = new float[0];
        LayerWeights.Biases b = weights.biases().orElse(new LayerWeights.Biases(none, none, none));
        LayerWeights.HeadNorms n = weights.headNorms().orElse(new LayerWeights.HeadNorms(none, none));
        int[] dims = {shape.hidden(), a.heads(), a.kvHeads(), a.headDim(), shape.ffn(), rope.rotaryDim(),
                rope.style() == Rope.Style.INTERLEAVED ? 1 : 0, weights.biases().isPresent() ? 1 : 0,
                weights.headNorms().isPresent() ? 1 : 0};
        long handle = NativeLibrary.createFusedLayer(matrices, dims, shape.eps(), a.scale(), weights.attnNorm(),
                weights.ffnNorm(), b.q(), b.k(), b.v(), n.q(), n.k());
        fused.add(handle, NativeLibrary::destroyFusedLayer);
        return handle;
    }

    /**
     * Waits until the copies that are made after loading (streamed matrices on the AVX-512 path) are made and in
     * use; returns whether they are, within {@code timeout}. Products are the same bits before and after; this is for
     * measuring the faster ones.
     */
    public boolean awaitCopies(Duration timeout) {
        return background.await(timeout);
    }

    /**
     * Readies the output head for {@link #runHead}: the head matrix (vocabulary × hidden, prepared as {@link #fuse}
     * prepares a layer's) and the final RMSNorm.
     */
    public FusedHead fuseHead(Matrix head, float[] norm, float eps) {
        requireOpen();
        if (norm.length != head.cols()) {
            throw new IllegalArgumentException("the final norm has " + norm.length + " elements, the head "
                    + head.cols() + " columns");
        }
        FusedHead fusedHead = new FusedHead(this, headHandle(head, norm, eps), head);
        if (copiedLater(head)) {
            background.submit(() -> {
                if (!closed) {
                    switchToCopy(head, () -> fusedHead.handle = headHandle(head, norm, eps));
                    pause(SETTLE);  // the head comes last: let the products still on its tiles finish, then sweep
                    releaseMapped(head);
                }
            });
        }
        Reference.reachabilityFence(this);
        return fusedHead;
    }

    private long headHandle(Matrix head, float[] norm, float eps) {
        long handle = NativeLibrary.createFusedHead(describe(head), norm, eps);
        fused.add(handle, NativeLibrary::destroyFusedHead);
        return handle;
    }

    /**
     * The logits of the batch's last token: its row of {@code x} ({@code batch} rows of hidden) normed, times the
     * head; the same bits as RMSNorm and {@link #matmul} would give.
     *
     * @param work   at least hidden floats of working memory
     * @param logits at least the head's rows
     */
    public void runHead(FusedHead head, float[] x, int batch, float[] work, float[] logits) {
        requireBatch(batch);
        runHead(head, x, batch, new int[]{batch - 1}, 1, work, logits);
    }

    /**
     * The logits of rows {@code rows[0 .. count)} of {@code x} ({@code batch} rows of hidden), each normed, times the
     * head, into {@code count} rows of {@code logits}.
     *
     * @param work at least {@code count} rows of hidden floats of working memory
     */
    public void runHead(FusedHead head, float[] x, int batch, int[] rows, int count, float[] work, float[] logits) {
        requireOpen();
        if (head.owner != this) {
            throw new IllegalArgumentException("the head was fused by other kernels");
        }
        requireBatch(batch);
        requirePositive("rows with logits", count);
        Matrix w = head.weights();
        requireLength("x", x, (long) batch * w.cols());
        requireLength("work", work, (long) count * w.cols());
        requireLength("logits", logits, (long) count * w.rows());
        for (int i = 0; i < count; i++) {
            if (rows[i] < 0 || rows[i] >= batch) {
                throw new IllegalArgumentException("head: row " + rows[i] + " outside the batch of " + batch);
            }
        }
        NativeLibrary.fusedHead(pool, isa.ordinal(), head.handle, x, rows, count, work, logits);
        Reference.reachabilityFence(this);
        Reference.reachabilityFence(head);
    }

    /** How the products read w: in place while the model fits in the cache, else as {@link #streaming}. */
    private Streaming readingOf(Matrix w) {
        return footprint.streams(w) ? streaming : Streaming.IN_PLACE;
    }

    /**
     * A matrix as the fused kernels read it: layout, address, rows, cols, compact, lanes, streaming. A lanes copy made
     * after loading ({@link #copiedLater}) is used once it exists.
     */
    private long[] describe(Matrix m) {
        if (!m.data().isDirect()) {
            throw new IllegalArgumentException(m.name() + ": fused kernels read weights in native memory; this "
                    + "matrix is on the Java heap");
        }
        prepare(m);
        Streaming reading = readingOf(m);
        boolean copiedNow = m.layout().tiled() && isa == Isa.AVX512 && reading == Streaming.IN_PLACE;
        boolean inLanes = copiedNow || laterLanes.has(m);
        boolean compacted = !inLanes && CompactCopies.worthIt(m);
        long address = copiedNow ? lanes.of(m) : inLanes ? laterLanes.of(m) : compacted ? compactCopy(m)
                : NativeLibrary.bufferAddress(m.data());
        if (copiedNow) {  // a later copy's tiles are given back once the layer has switched (see fuse)
            releaseMapped(m);
        }
        return new long[] {m.layout().ordinal(), address, m.rows(), m.cols(), compacted ? 1 : 0,
                inLanes || compacted && isa == Isa.AVX512 ? 1 : 0, reading.ordinal()};
    }

    /** Whether {@link #matmul} reads w from a lanes copy made after loading (for tests). */
    boolean productReadsCopy(Matrix w) {
        return laterLanes.has(w);
    }

    /**
     * Whether products read m from a lanes copy made after loading: streamed tiles on AVX-512, unless its compact copy
     * (in the lanes layout there) is read.
     */
    private boolean copiedLater(Matrix m) {
        return isa == Isa.AVX512 && m.layout().tiled() && readingOf(m) != Streaming.IN_PLACE
                && !CompactCopies.worthIt(m);
    }

    /**
     * On the copies' thread: copies m, lets {@code reswitch} rebuild its fused part to read the copies made so far, and
     * gives back m's tiles. The tiles given back before are given back once more: a product that was reading them when
     * its part switched has read some back in, and has finished since (copying m took longer).
     */
    private void switchToCopy(Matrix m, Runnable reswitch) {
        laterLanes.of(m);
        reswitch.run();
        if (releasedLast != null) {
            releaseMapped(releasedLast);
        }
        releaseMapped(m);
        releasedLast = m;
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Gives back the pages of m's tiles, now that a copy replaces them, if they are a file mapping (kernels.h). */
    private static void releaseMapped(Matrix m) {
        NativeLibrary.releaseMapped(m.data(), m.layout().bytes(m.rows(), m.cols()));
    }

    /**
     * Runs a whole layer, fused by {@link #fuse}, as one native call on {@code batch} tokens at positions
     * {@code startPos ..} of the cache's slot 0 (see the segmented form).
     */
    public void runLayer(FusedLayer layer, float[] x, float[] work, KvCache.Layer cache, int batch, int startPos) {
        requireBatch(batch);
        runLayer(layer, x, work, cache, batch, new int[]{0, batch, startPos, cache.base(0)}, 1);
    }

    /**
     * Runs a whole layer, fused by {@link #fuse}, as one native call on {@code batch} tokens in segments of
     * consecutive positions of one sequence each: RMSNorm, q/k/v (and Qwen2's biases or Qwen3's per-head norms), per
     * segment RoPE, its keys and values into its sequence's cache and attention, then the output projection and
     * residual, RMSNorm, gate/up, SiLU·up, down and residual. The products run once over all rows. The kernels are
     * those of the separate operations, in the same order, so the results are the same bits.
     *
     * @param x        the residual stream, {@code batch} rows of hidden, updated in place
     * @param work     working memory of at least {@link LayerShape#workFloats} floats
     * @param segments {@code segmentCount} quadruples: first row, rows, first position, and the cache element offset
     *                 of the segment's sequence ({@link KvCache.Layer#base})
     */
    public void runLayer(FusedLayer layer, float[] x, float[] work, KvCache.Layer cache, int batch, int[] segments,
                         int segmentCount) {
        runLayer(layer, x, work, cache, batch, segments, segmentCount, NO_LORA, NO_SCALES, 0);
    }

    /** Fields of one LoRA job of {@link #runLayer}: its target, then A and B as {@link #loraMatrix} describes them. */
    public static final int LORA_FIELDS = 15;
    private static final long[] NO_LORA = new long[0];
    private static final float[] NO_SCALES = new float[0];

    /**
     * Writes a LoRA pair's matrix as a job of {@link #runLayer} holds it (a float or half-precision matrix in native
     * memory) into
     * {@code fields[at .. at + 7)}.
     *
     * @throws IllegalArgumentException when it is not one
     */
    public void loraMatrix(Matrix m, long[] fields, int at) {
        if (m.layout() != Matrix.Layout.F32 && m.layout() != Matrix.Layout.F16 || !m.data().isDirect()) {
            throw new IllegalArgumentException(m.name() + ": a LoRA matrix is a float or half-precision matrix in"
                    + " native memory");
        }
        fields[at] = m.layout().ordinal();
        fields[at + 1] = NativeLibrary.bufferAddress(m.data());
        fields[at + 2] = m.rows();
        fields[at + 3] = m.cols();
        fields[at + 4] = 0;
        fields[at + 5] = 0;
        fields[at + 6] = Streaming.IN_PLACE.ordinal();
    }

    /**
     * As above, adding the products of {@code loraCount} LoRA jobs: job j ({@link #LORA_FIELDS} longs of
     * {@code lora} from {@code j · LORA_FIELDS}) is a target (0 to 6: q, k, v, o, gate, up, down) and its A
     * ({@code rank × in}) and B transposed ({@code rank × out}) from {@link #loraMatrix}; after the target's product,
     * each row r gets {@code loraScales[j · batch + r] · B·A·x} (rows of scale 0 are left out). The matrices must stay reachable
     * for the call.
     */
    public void runLayer(FusedLayer layer, float[] x, float[] work, KvCache.Layer cache, int batch, int[] segments,
                         int segmentCount, long[] lora, float[] loraScales, int loraCount) {
        requireOpen();
        checkLora(layer.shape(), batch, lora, loraScales, loraCount);
        if (layer.owner != this) {
            throw new IllegalArgumentException("the layer was fused by other kernels");
        }
        requireBatch(batch);
        requirePositive("segments", segmentCount);
        LayerShape shape = layer.shape();
        int kvDim = shape.attention().kvDim();
        requireLength("x", x, (long) batch * shape.hidden());
        requireLength("work", work, shape.workFloats(batch));
        if (cache.kvDim() != kvDim) {
            throw new IllegalArgumentException("layer: cache kv dim " + cache.kvDim() + " but layer kv dim " + kvDim);
        }
        Rope rope = layer.rope();
        long cacheLength = cache.elements();
        int rowsSeen = 0;
        for (int s = 0; s < segmentCount; s++) {
            int first = segments[4 * s];
            int rows = segments[4 * s + 1];
            int startPos = segments[4 * s + 2];
            long base = segments[4 * s + 3];
            if (first != rowsSeen || rows < 1 || first + rows > batch) {
                throw new IllegalArgumentException("layer: segment " + s + " (rows " + first + ".."
                        + (first + rows - 1) + ") does not follow the previous one within the batch of " + batch);
            }
            if (startPos < 0 || (long) startPos + rows > rope.positions()) {
                throw new IllegalArgumentException("layer: positions " + startPos + ".." + (startPos + rows - 1)
                        + " outside the rope tables' " + rope.positions());
            }
            if (base < 0 || base + ((long) startPos + rows) * kvDim > cacheLength) {
                throw new IllegalArgumentException("layer: segment " + s + " reaches past the cache's "
                        + cacheLength + " elements");
            }
            rowsSeen += rows;
        }
        if (rowsSeen != batch) {
            throw new IllegalArgumentException("layer: the segments hold " + rowsSeen + " rows, the batch " + batch);
        }
        if (cache.precision() == KvCache.Precision.Q8) {
            NativeLibrary.fusedLayerQ8(pool, isa.ordinal(), layer.handle, x, work, cache.keys8(), cache.values8(),
                    rope.cos(), rope.sin(), batch, segments, segmentCount, lora, loraScales, loraCount);
        } else if (cache.f16()) {
            NativeLibrary.fusedLayerHalf(pool, isa.ordinal(), layer.handle, x, work, cache.keys16(),
                    cache.values16(), rope.cos(), rope.sin(), batch, segments, segmentCount, lora, loraScales,
                    loraCount);
        } else {
            NativeLibrary.fusedLayer(pool, isa.ordinal(), layer.handle, x, work, cache.keys(), cache.values(),
                    rope.cos(), rope.sin(), batch, segments, segmentCount, lora, loraScales, loraCount);
        }
        Reference.reachabilityFence(this);
        Reference.reachabilityFence(layer);
    }

    private static boolean plainFloat(long layout) {
        return layout == Matrix.Layout.F32.ordinal() || layout == Matrix.Layout.F16.ordinal();
    }

    /** Checks the LoRA jobs against the layer's shapes: a wrong size would read or write past memory. */
    private static void checkLora(LayerShape shape, int batch, long[] lora, float[] scales, int count) {
        if (count < 0 || (long) count * LORA_FIELDS > lora.length || (long) count * batch > scales.length) {
            throw new IllegalArgumentException("layer: " + count + " LoRA jobs need " + count * LORA_FIELDS
                    + " fields and " + (long) count * batch + " scales, got " + lora.length + " and " + scales.length);
        }
        if (count == 0) {
            return;
        }
        int[] ins = shape.projectionInputs();
        int[] outs = shape.projectionOutputs();
        for (int j = 0; j < count; j++) {
            int at = j * LORA_FIELDS;
            long target = lora[at];
            long aRows = lora[at + 3];
            long aCols = lora[at + 4];
            long btRows = lora[at + 10];
            long btCols = lora[at + 11];
            if (target < 0 || target > 6 || !plainFloat(lora[at + 1]) || !plainFloat(lora[at + 8]) || lora[at + 2] == 0
                    || lora[at + 9] == 0 || aCols != ins[(int) target] || btCols != outs[(int) target]
                    || aRows != btRows || aRows < 1) {
                throw new IllegalArgumentException("layer: LoRA job " + j + " does not fit target " + target);
            }
        }
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

    private static void requireNonNegative(String what, int n) {
        if (n < 0) {
            throw new IllegalArgumentException(what + " must not be negative, got " + n);
        }
    }

    private static void requireCount(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must not be negative, got " + n);
        }
    }

    private static void requireLength(String what, float[] a, long needed) {
        requireLength(what, a.length, needed);
    }

    private static void requireLength(String what, long length, long needed) {
        if (length < needed) {
            throw new IllegalArgumentException(what + ": needs " + needed + " elements, has " + length);
        }
    }
}
