package dev.laneway.engine.kernels;

import java.nio.ByteBuffer;

/**
 * The reference kernels: plain loops in float arithmetic, written to be obviously correct. Every faster kernel is
 * tested against these. Thread-safe; the scratch a call needs is per thread.
 */
public final class JavaKernels implements Kernels {

    private final ThreadLocal<float[]> rowScratch = ThreadLocal.withInitial(() -> new float[0]);
    private final ThreadLocal<float[]> scoreScratch = ThreadLocal.withInitial(() -> new float[0]);

    @Override
    public String name() {
        return "java";
    }

    @Override
    public void matmul(Matrix w, float[] x, float[] out, int batch) {
        int rows = w.rows();
        int cols = w.cols();
        float[] wr = scratch(rowScratch, cols);
        for (int r = 0; r < rows; r++) {
            row(w, r, wr, 0);
            for (int b = 0; b < batch; b++) {
                float sum = 0f;
                int xo = b * cols;
                for (int c = 0; c < cols; c++) {
                    sum += wr[c] * x[xo + c];
                }
                out[b * rows + r] = sum;
            }
        }
    }

    @Override
    public void row(Matrix w, int row, float[] out, int offset) {
        ByteBuffer d = w.data();
        int cols = w.cols();
        long base = (long) row * cols;
        switch (w.layout()) {
            case F32 -> {
                for (int c = 0; c < cols; c++) {
                    out[offset + c] = d.getFloat((int) ((base + c) * 4));
                }
            }
            case F16 -> {
                for (int c = 0; c < cols; c++) {
                    out[offset + c] = Floats.f16ToFloat(d.getShort((int) ((base + c) * 2)));
                }
            }
            case BF16 -> {
                for (int c = 0; c < cols; c++) {
                    out[offset + c] = Floats.bf16ToFloat(d.getShort((int) ((base + c) * 2)));
                }
            }
            case TILES_Q8, TILES_Q4_1, TILES_Q4_K -> Tiles.decodeRow(w, row, out, offset);
        }
    }

    @Override
    public void rmsnorm(float[] out, float[] x, float[] weight, int dim, int batch, float eps) {
        for (int b = 0; b < batch; b++) {
            int o = b * dim;
            float ss = 0f;
            for (int i = 0; i < dim; i++) {
                ss += x[o + i] * x[o + i];
            }
            float inv = (float) (1.0 / Math.sqrt(ss / dim + eps));
            for (int i = 0; i < dim; i++) {
                out[o + i] = x[o + i] * inv * weight[i];
            }
        }
    }

    @Override
    public void rope(float[] x, int firstRow, int batch, int heads, int startPos, Rope rope) {
        int headDim = rope.headDim();
        int half = rope.rotaryDim() / 2;
        for (int row = 0; row < batch; row++) {
            int b = firstRow + row;
            int t = (startPos + row) * half;
            for (int h = 0; h < heads; h++) {
                int o = (b * heads + h) * headDim;
                for (int i = 0; i < half; i++) {
                    int i0 = rope.style() == Rope.Style.INTERLEAVED ? o + 2 * i : o + i;
                    int i1 = rope.style() == Rope.Style.INTERLEAVED ? i0 + 1 : o + i + half;
                    float c = rope.cos()[t + i];
                    float s = rope.sin()[t + i];
                    float v0 = x[i0];
                    float v1 = x[i1];
                    x[i0] = v0 * c - v1 * s;
                    x[i1] = v0 * s + v1 * c;
                }
            }
        }
    }

    @Override
    public void attention(float[] out, float[] q, int firstRow, int batch, KvCache.Layer cache, int slot,
                          int startPos, AttentionShape shape) {
        if (cache.f16()) {
            HalfAttention.attend(out, q, firstRow, batch, cache, slot, startPos, shape);
            return;
        }
        if (cache.precision() == KvCache.Precision.Q8) {
            Q8Attention.attend(out, q, firstRow, batch, cache, slot, startPos, shape);
            return;
        }
        int headDim = shape.headDim();
        int kvDim = shape.kvDim();
        int group = shape.heads() / shape.kvHeads();
        int base = cache.base(slot);
        float[] scores = scratch(scoreScratch, startPos + batch);
        for (int row = 0; row < batch; row++) {
            int b = firstRow + row;
            int pos = startPos + row;
            for (int h = 0; h < shape.heads(); h++) {
                int qo = (b * shape.heads() + h) * headDim;
                int kvo = (h / group) * headDim;
                // Scores against every cached key up to this position, then softmax.
                float max = Float.NEGATIVE_INFINITY;
                int first = shape.firstPosition(pos);
                for (int t = first; t <= pos; t++) {
                    float dot = 0f;
                    int ko = base + t * kvDim + kvo;
                    for (int i = 0; i < headDim; i++) {
                        dot += q[qo + i] * cache.keys()[ko + i];
                    }
                    scores[t] = shape.capped(dot * shape.scale());
                    max = Math.max(max, scores[t]);
                }
                float sum = 0f;
                for (int t = first; t <= pos; t++) {
                    scores[t] = (float) Math.exp(scores[t] - max);
                    sum += scores[t];
                }
                // The weighted sum of values.
                for (int i = 0; i < headDim; i++) {
                    out[qo + i] = 0f;
                }
                for (int t = first; t <= pos; t++) {
                    float a = scores[t] / sum;
                    int vo = base + t * kvDim + kvo;
                    for (int i = 0; i < headDim; i++) {
                        out[qo + i] += a * cache.values()[vo + i];
                    }
                }
            }
        }
    }

    @Override
    public void siluMul(float[] gate, float[] up, int n) {
        for (int i = 0; i < n; i++) {
            float g = gate[i];
            gate[i] = g / (1f + (float) Math.exp(-g)) * up[i];
        }
    }

    @Override
    public void geluMul(float[] gate, float[] up, int n) {
        Gelu.mul(gate, up, 0, n);
    }

    @Override
    public void add(float[] x, float[] y, int n) {
        for (int i = 0; i < n; i++) {
            x[i] += y[i];
        }
    }

    @Override
    public void addBias(float[] x, float[] bias, int batch) {
        int n = bias.length;
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < n; i++) {
                x[b * n + i] += bias[i];
            }
        }
    }

    private static float[] scratch(ThreadLocal<float[]> holder, int size) {
        float[] a = holder.get();
        if (a.length < size) {
            a = new float[size];
            holder.set(a);
        }
        return a;
    }
}
