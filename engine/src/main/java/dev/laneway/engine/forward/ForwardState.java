package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.plan.Plan;

import java.util.List;

/**
 * The activations of a forward call for up to {@code maxBatch} tokens of up to {@code maxSequences} sequences, the
 * call's {@link Batch}, and the KV cache with a slot per sequence. Allocated once and reused by every call; the cache
 * grows as positions are used.
 */
public final class ForwardState {
    final float[][] buffers;
    final KvCache cache;
    final int maxBatch;
    final Batch batch;
    /** Scratch rows for the batch's LoRA adapters, if it applies any. */
    final LoraProducts lora = new LoraProducts();
    /** The fused forward's LoRA jobs for a layer call. */
    final LoraJobs loraJobs = new LoraJobs();
    private final int contextLength;

    /** Plan buffers; a logits row is {@code logitsStride} floats (the head's rows, at least the vocabulary). */
    ForwardState(List<Plan.Dim> bufferDims, Dims dims, int logitsStride, int maxBatch, int maxSequences,
                 int maxLogits, KvCache.Precision kv) {
        this(lengths(bufferDims, dims, logitsStride, maxBatch, maxLogits), dims, maxBatch, maxSequences, maxLogits,
                kv);
    }

    /** Buffers of the given lengths, in floats. */
    ForwardState(long[] lengths, Dims dims, int maxBatch, int maxSequences, int maxLogits, KvCache.Precision kv) {
        if (maxBatch < 1 || maxSequences < 1 || maxLogits < 1) {
            throw new IllegalArgumentException("a forward state needs room for a token of a sequence and its logits,"
                    + " got " + maxBatch + " tokens, " + maxSequences + " sequences, " + maxLogits + " rows of logits");
        }
        if (kv == KvCache.Precision.Q8 && dims.headDim() % KvCache.Q8_BLOCK != 0) {
            throw new IllegalArgumentException("--opt kv=q8: this model's heads hold " + dims.headDim()
                    + " elements, not whole blocks of " + KvCache.Q8_BLOCK + " (as llama.cpp's q8_0 cache needs them);"
                    + " use kv=f16");
        }
        this.maxBatch = maxBatch;
        this.buffers = new float[lengths.length][];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = new float[Math.toIntExact(lengths[i])];
        }
        this.cache = KvCache.onDemand(dims.layers(), dims.contextLength(), dims.kvDim(), dims.headDim(), kv,
                maxSequences);
        this.batch = new Batch(maxBatch, maxSequences, logitRows(maxBatch, maxLogits));
        this.contextLength = dims.contextLength();
    }

    /** The batch the next forward call runs: fill it, then run the forward's steps ({@link LaneForward#bind}). */
    public Batch batch() {
        return batch;
    }

    /** Checks the batch against the context and makes room in the cache for its positions. */
    public void prepare() {
        if (batch.segments == 0) {
            throw new IllegalArgumentException("an empty batch");
        }
        int end = 0;
        for (int i = 0; i < batch.segments; i++) {
            int start = batch.startPos[i];
            int n = batch.rows[i];
            if (start < 0 || start + n > contextLength) {
                throw new IllegalArgumentException("positions " + start + ".." + (start + n - 1)
                        + " exceed the context of " + contextLength);
            }
            if (batch.slot[i] < 0 || batch.slot[i] >= cache.slots()) {
                throw new IllegalArgumentException("slot " + batch.slot[i] + " outside 0.." + (cache.slots() - 1));
            }
            end = Math.max(end, start + n);
        }
        cache.reserve(end);
        for (int i = 0; i < batch.segments; i++) {
            batch.quads[4 * i] = batch.firstRow[i];
            batch.quads[4 * i + 1] = batch.rows[i];
            batch.quads[4 * i + 2] = batch.startPos[i];
            batch.quads[4 * i + 3] = cache.layer(0).base(batch.slot[i]);
        }
    }

    /** The rows of logits a call computes at most: those asked for, no more than its tokens. */
    static int logitRows(int maxBatch, int maxLogits) {
        return Math.min(maxBatch, maxLogits);
    }

    private static long[] lengths(List<Plan.Dim> bufferDims, Dims dims, int logitsStride, int maxBatch,
                                  int maxLogits) {
        long[] lengths = new long[bufferDims.size()];
        for (int i = 0; i < lengths.length; i++) {
            // Logits are computed only for the rows that ask for them.
            lengths[i] = bufferDims.get(i) == Plan.Dim.VOCAB ? (long) logitRows(maxBatch, maxLogits) * logitsStride
                    : (long) maxBatch * size(bufferDims.get(i), dims);
        }
        return lengths;
    }

    static int size(Plan.Dim dim, Dims dims) {
        return switch (dim) {
            case HIDDEN -> dims.hidden();
            case Q -> dims.qDim();
            case KV -> dims.kvDim();
            case FFN -> dims.ffn();
            case VOCAB -> dims.vocab();
            case EXPERTS -> dims.experts();
        };
    }

    /** The most tokens one forward call takes. */
    public int maxBatch() {
        return maxBatch;
    }

    /** The KV cache, a slot per sequence. */
    public KvCache cache() {
        return cache;
    }
}
