package dev.laneway.engine.kernels;

/**
 * Attention over a half-precision KV cache with llama.cpp's numerics (its CPU flash-attention path, which
 * llama-server uses by default): the query is rounded to half precision, scores are half-by-half dot products summed
 * in single precision, and the softmax runs online while the weighted values accumulate in half precision. Matching
 * these roundings is what keeps probabilities within 1e-3 of llama.cpp's.
 */
public final class HalfAttention {
    private static final ThreadLocal<float[][]> SCRATCH = ThreadLocal.withInitial(() -> new float[2][0]);

    private HalfAttention() {
    }

    /** See {@link Kernels#attention}; {@code cache} must be half precision. */
    public static void attend(float[] out, float[] q, int firstRow, int batch, KvCache.Layer cache, int slot,
                              int startPos, AttentionShape shape) {
        int headDim = shape.headDim();
        int kvDim = shape.kvDim();
        int group = shape.heads() / shape.kvHeads();
        short[] keys = cache.keys16();
        short[] values = cache.values16();
        float[][] scratch = SCRATCH.get();
        if (scratch[0].length < headDim) {
            scratch[0] = new float[headDim];
            scratch[1] = new float[headDim];
        }
        float[] q16 = scratch[0];
        float[] acc = scratch[1];
        int base = cache.base(slot);
        for (int row = 0; row < batch; row++) {
            int b = firstRow + row;
            int pos = startPos + row;
            for (int h = 0; h < shape.heads(); h++) {
                int qo = (b * shape.heads() + h) * headDim;
                int kvo = base + (h / group) * headDim;
                for (int i = 0; i < headDim; i++) {
                    q16[i] = half(q[qo + i]);
                    acc[i] = 0f;
                }
                float max = Float.NEGATIVE_INFINITY;
                float sum = 0f;
                for (int t = shape.firstPosition(pos); t <= pos; t++) {
                    int ko = t * kvDim + kvo;
                    float dot = 0f;
                    for (int i = 0; i < headDim; i++) {
                        dot += q16[i] * Floats.f16ToFloat(keys[ko + i]);
                    }
                    float score = shape.capped(dot * shape.scale());
                    float rescale = 1f;
                    float weight = 1f;
                    if (score > max) {
                        // A new maximum: earlier weights shrink by exp(old − new).
                        rescale = (float) Math.exp(max - score);
                        max = score;
                        for (int i = 0; i < headDim; i++) {
                            acc[i] = half(acc[i] * rescale);
                        }
                    } else {
                        weight = (float) Math.exp(score - max);
                    }
                    int vo = t * kvDim + kvo;
                    for (int i = 0; i < headDim; i++) {
                        acc[i] = half(acc[i] + Floats.f16ToFloat(values[vo + i]) * weight);
                    }
                    sum = sum * rescale + weight;
                }
                float inv = 1f / sum;
                for (int i = 0; i < headDim; i++) {
                    out[qo + i] = acc[i] * inv;
                }
            }
        }
    }

    /** A float rounded to half precision and back. */
    static float half(float f) {
        return Floats.f16ToFloat(Floats.floatToF16(f));
    }
}
