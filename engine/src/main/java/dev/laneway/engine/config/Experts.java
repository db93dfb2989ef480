package dev.laneway.engine.config;

/**
 * The mixture of experts of a sparse model's MLP (Qwen3-MoE, Mixtral): a router scores {@code count} experts per token,
 * the {@code perToken} best run, and their outputs are summed weighted by the router's softmax probabilities,
 * renormalised over the chosen ones when {@code normalize}.
 *
 * @param count     {@code num_experts} ({@code num_local_experts} in Mixtral's config), 0 for a dense model
 * @param perToken  {@code num_experts_per_tok}
 * @param ffn       each expert's MLP width: {@code moe_intermediate_size} (Qwen3-MoE) or {@code intermediate_size}
 * @param normalize {@code norm_topk_prob}: the chosen experts' weights are divided by their sum (always in Mixtral)
 */
public record Experts(int count, int perToken, int ffn, boolean normalize) {
    /** A dense model's: no experts. */
    public static final Experts NONE = new Experts(0, 0, 0, false);

    /** The most experts a layer may have (the largest mixtures published have 512). */
    public static final int MAX_COUNT = 1024;

    public Experts {
        if (count < 0 || count > MAX_COUNT || count > 0 && (perToken < 1 || perToken > count || ffn < 1)) {
            throw new IllegalArgumentException("num_experts " + count + ", num_experts_per_tok " + perToken
                    + " and the experts' intermediate size " + ffn + " do not describe a mixture of experts (at most "
                    + MAX_COUNT + " experts)");
        }
    }

    /** Whether the MLP is a mixture of experts. */
    public boolean present() {
        return count > 0;
    }
}
