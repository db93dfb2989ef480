package dev.laneway.engine.kernels;

/**
 * Attention over an eight-bit KV cache ({@link KvCache.Precision#Q8}) as llama.cpp's CPU flash attention computes over
 * a {@code q8_0} cache: the cache holds keys and values rotated ({@link Hadamard}), so each query head is rotated as the
 * keys were and quantized into the same blocks, a score is the sum over blocks of the two
 * steps times the codes' integer dot product, the values are step · code, summed in single precision, and each head's
 * sum is turned back by the values' rotation. The native kernels compute the same sums.
 */
public final class Q8Attention {
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Q8Attention() {
    }

    /** See {@link Kernels#attention}; {@code cache} must be eight-bit. */
    public static void attend(float[] out, float[] q, int firstRow, int batch, KvCache.Layer cache, int slot,
                              int startPos, AttentionShape shape) {
        int headDim = shape.headDim();
        int kvDim = shape.kvDim();
        int group = shape.heads() / shape.kvHeads();
        byte[] keys = cache.keys8();
        byte[] values = cache.values8();
        if (cache.headDim() != headDim) {
            throw new IllegalArgumentException("attention: heads of " + headDim + " over an eight-bit cache of heads of "
                    + cache.headDim());
        }
        Scratch scratch = SCRATCH.get().fit(startPos + batch, headDim);
        float[] scores = scratch.scores;
        float[] head = scratch.head;
        byte[] qq = scratch.query;
        int base = cache.base(slot);
        for (int row = 0; row < batch; row++) {
            int b = firstRow + row;
            int pos = startPos + row;
            int first = shape.firstPosition(pos);
            for (int h = 0; h < shape.heads(); h++) {
                int qo = (b * shape.heads() + h) * headDim;
                int kvo = base + (h / group) * headDim;
                System.arraycopy(q, qo, head, 0, headDim);
                Hadamard.rotate(head, 0, headDim, cache.keyRotation());
                for (int i = 0; i < headDim; i += KvCache.Q8_BLOCK) {
                    KvCache.quantizeBlock(head, i, qq, cache.index(i));
                }
                float max = Float.NEGATIVE_INFINITY;
                for (int t = first; t <= pos; t++) {
                    float dot = 0f;
                    for (int i = 0; i < headDim; i += KvCache.Q8_BLOCK) {
                        int at = cache.index(kvo + t * kvDim + i);
                        int qa = cache.index(i);
                        int sum = 0;
                        for (int j = 2; j < KvCache.Q8_BLOCK_BYTES; j++) {
                            sum += qq[qa + j] * keys[at + j];
                        }
                        dot += KvCache.step(qq, qa) * KvCache.step(keys, at) * sum;
                    }
                    scores[t] = shape.capped(dot * shape.scale());
                    max = Math.max(max, scores[t]);
                }
                float total = 0f;
                for (int t = first; t <= pos; t++) {
                    scores[t] = (float) Math.exp(scores[t] - max);
                    total += scores[t];
                }
                float inv = 1f / total;
                java.util.Arrays.fill(out, qo, qo + headDim, 0f);
                for (int t = first; t <= pos; t++) {
                    float w = scores[t] * inv;
                    for (int i = 0; i < headDim; i += KvCache.Q8_BLOCK) {
                        int at = cache.index(kvo + t * kvDim + i);
                        float d = KvCache.step(values, at);
                        for (int j = 0; j < KvCache.Q8_BLOCK; j++) {
                            out[qo + i + j] += w * (d * values[at + 2 + j]);
                        }
                    }
                }
                Hadamard.rotate(out, qo, headDim, cache.valueRotation());
            }
        }
    }

    /** A thread's scores and quantized query head, grown as needed. */
    private static final class Scratch {
        float[] scores = new float[0];
        float[] head = new float[0];
        byte[] query = new byte[0];

        Scratch fit(int positions, int headDim) {
            if (scores.length < positions) {
                scores = new float[positions];
            }
            if (head.length < headDim) {
                head = new float[headDim];
            }
            int bytes = (int) KvCache.Precision.Q8.bytes(headDim);
            if (query.length < bytes) {
                query = new byte[bytes];
            }
            return this;
        }
    }
}
