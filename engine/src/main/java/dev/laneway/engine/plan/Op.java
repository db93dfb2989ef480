package dev.laneway.engine.plan;

import dev.laneway.engine.kernels.Rope;

import java.util.List;

/**
 * One step of a {@link Plan}. Operands name buffers of the forward state ({@link Plan#buffers()}) and tensors of the
 * container; in a layer's ops, {@code {L}} in a tensor name stands for the layer number.
 */
public sealed interface Op {

    /** The JSON name of the op, e.g. {@code rms_norm}. */
    String kind();

    /** Tensor names this op reads, with {@code {L}} unexpanded. */
    List<String> tensors();

    /** Buffer names this op reads or writes. */
    List<String> buffers();

    /** {@code out} ← row {@code token} of the embedding {@code weight}, for each token of the batch. */
    record Embed(String weight, String out) implements Op {
        public String kind() {
            return "embed";
        }

        public List<String> tensors() {
            return List.of(weight);
        }

        public List<String> buffers() {
            return List.of(out);
        }
    }

    /**
     * {@code out} ← RMSNorm({@code in}) · {@code weight}. With {@code perHead}, each head of {@code headDim} elements is
     * normalised on its own (Qwen3's q/k norms).
     */
    record RmsNorm(String in, String weight, String out, boolean perHead) implements Op {
        public String kind() {
            return "rms_norm";
        }

        public List<String> tensors() {
            return List.of(weight);
        }

        public List<String> buffers() {
            return List.of(in, out);
        }
    }

    /** {@code out} ← {@code weight} · {@code in}; with {@code lastOnly}, for the batch's last row alone (the head). */
    record MatMul(String weight, String in, String out, boolean lastOnly) implements Op {
        public String kind() {
            return "matmul";
        }

        public List<String> tensors() {
            return List.of(weight);
        }

        public List<String> buffers() {
            return List.of(in, out);
        }
    }

    /** {@code out} += {@code bias}, per row. */
    record AddBias(String bias, String out) implements Op {
        public String kind() {
            return "add_bias";
        }

        public List<String> tensors() {
            return List.of(bias);
        }

        public List<String> buffers() {
            return List.of(out);
        }
    }

    /** Rotary position embedding of the query and key buffers, in the given pairing style. */
    record RotaryEmbedding(String q, String k, Rope.Style style) implements Op {
        public String kind() {
            return "rope";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(q, k);
        }
    }

    /**
     * Stores {@code k} and {@code v} in the layer's cache at the batch's positions, then {@code out} ← causal attention
     * of {@code q} over the cache.
     */
    record Attention(String q, String k, String v, String out) implements Op {
        public String kind() {
            return "attention";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(q, k, v, out);
        }
    }

    /** {@code gate} ← silu({@code gate}) · {@code up}. */
    record SiluMul(String gate, String up) implements Op {
        public String kind() {
            return "silu_mul";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(gate, up);
        }
    }

    /** {@code to} += {@code from} (the residual). */
    record Add(String to, String from) implements Op {
        public String kind() {
            return "add";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(to, from);
        }
    }

    /** {@code gate} ← gelu({@code gate}) · {@code up}, GELU in its tanh form (Gemma's GeGLU). */
    record GeluMul(String gate, String up) implements Op {
        public String kind() {
            return "gelu_mul";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(gate, up);
        }
    }

    /** {@code buffer} ← {@code buffer} · {@code factor} (Gemma's embedding scale, √hidden). */
    record Scale(String buffer, double factor) implements Op {
        public String kind() {
            return "scale";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(buffer);
        }
    }

    /**
     * A mixture of experts: {@code out} ← Σ w · down(silu(gate · {@code in}) ⊙ (up · {@code in})) over the
     * {@code perToken} experts whose {@code router} scores are highest, w their softmax probabilities (renormalised
     * over the chosen ones when {@code normalize}). Expert tensor names hold {@code {E}} for the expert. It works in
     * the plan's buffers {@code router} (the scores, dimension experts), {@code moe_x} and {@code moe_y} (hidden: an
     * expert's rows gathered, and its output) and {@code hb}, {@code hb2} (ffn), so that each expert's weights are
     * read once per batch, for all the rows that chose it.
     */
    record Moe(String in, String out, String router, String gate, String up, String down, int experts, int perToken,
               boolean normalize) implements Op {
        /** The scratch buffers a moe op works in. */
        public static final List<String> SCRATCH = List.of("router", "moe_x", "moe_y", "hb", "hb2");

        public Moe {
            if (experts < 1 || perToken < 1 || perToken > experts) {
                throw new IllegalArgumentException("a mixture of " + experts + " experts cannot choose " + perToken);
            }
        }

        public String kind() {
            return "moe";
        }

        public List<String> tensors() {
            return List.of(router, gate, up, down);
        }

        public List<String> buffers() {
            List<String> all = new java.util.ArrayList<>(List.of(in, out));
            all.addAll(SCRATCH);
            return all;
        }
    }

    /** {@code buffer} ← cap · tanh({@code buffer} / cap), per element (logit soft-capping). */
    record SoftCap(String buffer, double cap) implements Op {
        public SoftCap {
            if (!(cap > 0) || Double.isInfinite(cap)) {
                throw new IllegalArgumentException("a soft cap must be positive, got " + cap);
            }
        }

        public String kind() {
            return "softcap";
        }

        public List<String> tensors() {
            return List.of();
        }

        public List<String> buffers() {
            return List.of(buffer);
        }
    }
}
