package dev.laneway.engine.kernels;

import java.util.List;
import java.util.Optional;

/**
 * One transformer layer's weights, by role: the attention block (RMSNorm, the q/k/v projections with Qwen2's
 * optional biases and Qwen3's optional per-head norms, the output projection) and the feed-forward block (RMSNorm,
 * gate, up, down). Matrices are rows (outputs) × columns (inputs).
 *
 * @param attnNorm  input RMSNorm weight, [hidden]
 * @param wq        query projection, qDim × hidden
 * @param wk        key projection, kvDim × hidden
 * @param wv        value projection, kvDim × hidden
 * @param biases    q/k/v biases (Qwen2)
 * @param headNorms per-head q/k RMSNorm weights (Qwen3)
 * @param wo        output projection, hidden × qDim
 * @param ffnNorm   post-attention RMSNorm weight, [hidden]
 * @param gate      gate projection, ffn × hidden
 * @param up        up projection, ffn × hidden
 * @param down      down projection, hidden × ffn
 */
public record LayerWeights(float[] attnNorm, Matrix wq, Matrix wk, Matrix wv, Optional<Biases> biases,
                           Optional<HeadNorms> headNorms, Matrix wo, float[] ffnNorm, Matrix gate, Matrix up,
                           Matrix down) {

    /** Qwen2's biases of the q, k and v projections: [qDim], [kvDim], [kvDim]. */
    public record Biases(float[] q, float[] k, float[] v) {
    }

    /** Qwen3's RMSNorm weights applied to each query and key head on its own: [headDim] each. */
    public record HeadNorms(float[] q, float[] k) {
    }

    /** The seven matrices in the order wq, wk, wv, wo, gate, up, down. */
    public List<Matrix> matrices() {
        return List.of(wq, wk, wv, wo, gate, up, down);
    }

    /**
     * Checks every size against the shape.
     *
     * @throws IllegalArgumentException naming the first weight whose size is wrong
     */
    public void check(LayerShape shape) {
        int hidden = shape.hidden();
        int q = shape.attention().qDim();
        int kv = shape.attention().kvDim();
        int headDim = shape.attention().headDim();
        length("attention norm", attnNorm, hidden);
        length("feed-forward norm", ffnNorm, hidden);
        size(wq, q, hidden);
        size(wk, kv, hidden);
        size(wv, kv, hidden);
        size(wo, hidden, q);
        size(gate, shape.ffn(), hidden);
        size(up, shape.ffn(), hidden);
        size(down, hidden, shape.ffn());
        biases.ifPresent(b -> {
            length("q bias", b.q(), q);
            length("k bias", b.k(), kv);
            length("v bias", b.v(), kv);
        });
        headNorms.ifPresent(n -> {
            length("q norm", n.q(), headDim);
            length("k norm", n.k(), headDim);
        });
    }

    private static void size(Matrix m, int rows, int cols) {
        if (m.rows() != rows || m.cols() != cols) {
            throw new IllegalArgumentException(m.name() + " is " + m.rows() + "x" + m.cols() + ", expected " + rows
                    + "x" + cols);
        }
    }

    private static void length(String what, float[] v, int n) {
        if (v.length != n) {
            throw new IllegalArgumentException("the " + what + " has " + v.length + " elements, expected " + n);
        }
    }
}
