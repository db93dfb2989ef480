package dev.laneway.engine.plan;

import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.kernels.Rope;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The plans of the dense llama-family architectures, in Hugging Face tensor names: llama and mistral (plain), qwen2
 * (q/k/v biases), qwen3 (per-head q/k RMSNorm), phi3 (llama's layer once its fused projections are split, see
 * docs/plan.md; its partial rotary and longrope are in the RoPE tables, not the plan).
 */
public final class StandardPlans {
    private static final String LAYER = "model.layers.{L}.";
    /** The token embedding (also the output head when tied). */
    public static final String EMBEDDING = "model.embed_tokens.weight";
    /** The output head when it is not tied to the embedding. */
    public static final String HEAD = "lm_head.weight";
    /**
     * A reranker's ranking head, {@code [labels, hidden]} (Hugging Face's sequence-classification name; llama.cpp's
     * {@code cls.output.weight}); no plan reads it, the model applies it to a pooled state.
     */
    public static final String RANKING_HEAD = "score.weight";
    /** The final RMSNorm before the head. */
    public static final String FINAL_NORM = "model.norm.weight";
    /** Per-layer tensors, with {@code {L}} for the layer number. */
    public static final String ATTN_NORM = LAYER + "input_layernorm.weight";
    public static final String FFN_NORM = LAYER + "post_attention_layernorm.weight";
    public static final String O_PROJ = LAYER + "self_attn.o_proj.weight";
    public static final String Q_NORM = LAYER + "self_attn.q_norm.weight";
    public static final String K_NORM = LAYER + "self_attn.k_norm.weight";
    public static final String GATE_PROJ = LAYER + "mlp.gate_proj.weight";
    public static final String UP_PROJ = LAYER + "mlp.up_proj.weight";
    public static final String DOWN_PROJ = LAYER + "mlp.down_proj.weight";
    /** Gemma 3's norms after attention, before the MLP and after it. */
    public static final String POST_ATTN_NORM = LAYER + "post_attention_layernorm.weight";
    public static final String PRE_FFN_NORM = LAYER + "pre_feedforward_layernorm.weight";
    public static final String POST_FFN_NORM = LAYER + "post_feedforward_layernorm.weight";

    private StandardPlans() {
    }

    /** What distinguishes the architectures' layers. */
    public record Variant(boolean qkvBias, boolean qkNorm, Rope.Style ropeStyle, boolean tiedEmbeddings) {
    }

    /** The variant of a Hugging Face {@code model_type}, or null when it is not a dense llama-family one. */
    public static Variant variant(String modelType, Rope.Style ropeStyle, boolean tied) {
        return Architecture.of(modelType).filter(Architecture::llamaLayer)
                .map(a -> new Variant(a.qkvBias(), a.qkNorm(), ropeStyle, tied)).orElse(null);
    }

    /**
     * What {@link #recognise} found: the variant whose plan a container holds, or why it holds none of them.
     *
     * @param variant    the variant, when the plan is exactly its standard plan
     * @param difference otherwise, the first op where the plan departs from the closest standard plan
     */
    public record Recognition(Optional<Variant> variant, String difference) {
    }

    /**
     * Which standard plan {@code plan} is, for a container of {@code modelType}: the architecture fixes its
     * biases and head norms; the plan's rope op gives the rope style and its head weight whether the embedding is
     * tied. Anything else that differs is reported by op.
     */
    public static Recognition recognise(String modelType, Plan plan) {
        Variant base = variant(modelType, Rope.Style.INTERLEAVED, false);
        if (base == null) {
            return new Recognition(Optional.empty(), "model_type '" + modelType + "' is not one of "
                    + String.join(", ", architectures()));
        }
        Rope.Style style = plan.layer().stream().filter(o -> o instanceof Op.RotaryEmbedding)
                .map(o -> ((Op.RotaryEmbedding) o).style()).findFirst().orElse(Rope.Style.INTERLEAVED);
        boolean tied = plan.epilogue().stream().anyMatch(o -> o instanceof Op.MatMul m && m.weight().equals(EMBEDDING));
        Variant v = new Variant(base.qkvBias(), base.qkNorm(), style, tied);
        Plan standard = plan(v);
        if (standard.equals(plan)) {
            return new Recognition(Optional.of(v), "");
        }
        String where = "the standard " + modelType + " plan";
        if (!standard.buffers().equals(plan.buffers())) {
            return new Recognition(Optional.empty(), "its buffers " + plan.buffers() + " are not those of " + where
                    + " " + standard.buffers());
        }
        String d = firstDifference("prologue", plan.prologue(), standard.prologue(), where);
        if (d == null) {
            d = firstDifference("layer", plan.layer(), standard.layer(), where);
        }
        if (d == null) {
            d = firstDifference("epilogue", plan.epilogue(), standard.epilogue(), where);
        }
        return new Recognition(Optional.empty(), d != null ? d : "its logits buffer '" + plan.logits()
                + "' is not that of " + where + " ('" + standard.logits() + "')");
    }

    private static String firstDifference(String part, List<Op> ops, List<Op> standard, String where) {
        for (int i = 0; i < Math.max(ops.size(), standard.size()); i++) {
            if (i >= ops.size()) {
                return "its " + part + " stops after " + i + " ops, where " + where + " goes on with "
                        + describe(standard.get(i));
            }
            if (i >= standard.size()) {
                return "its " + part + " op " + i + ", " + describe(ops.get(i)) + ", is past the end of " + where;
            }
            if (!ops.get(i).equals(standard.get(i))) {
                return "its " + part + " op " + i + ", " + describe(ops.get(i)) + ", is not in " + where + " (which has "
                        + describe(standard.get(i)) + " there)";
            }
        }
        return null;
    }

    /** An op in a few words: its kind and what it reads, e.g. {@code matmul model.layers.{L}.mlp.up_proj.weight}. */
    static String describe(Op op) {
        return op.kind() + " " + (op.tensors().isEmpty() ? String.join(", ", op.buffers()) : op.tensors().get(0));
    }

    /** The q, k or v projection's weight ({@code p} is {@code q}, {@code k} or {@code v}), with {@code {L}}. */
    public static String projection(String p) {
        return LAYER + "self_attn." + p + "_proj.weight";
    }

    /** The q, k or v projection's bias (Qwen2), with {@code {L}}. */
    public static String projectionBias(String p) {
        return LAYER + "self_attn." + p + "_proj.bias";
    }

    /** A per-layer tensor name for layer {@code layer}. */
    public static String ofLayer(String template, int layer) {
        return template.replace("{L}", Integer.toString(layer));
    }

    /** The architectures {@link #variant} knows. */
    public static List<String> architectures() {
        return Architecture.named(Architecture::llamaLayer);
    }

    /**
     * The plan of a model of {@code config}'s architecture, or null when there is none: the variants' plans, and
     * Gemma 3's.
     */
    public static Plan plan(ModelConfig config, boolean tiedEmbeddings) {
        Architecture arch = config.architecture().orElse(null);
        if (arch != null && arch.gemma()) {
            return gemma(config, arch, tiedEmbeddings);
        }
        if (arch != null && arch.experts()) {
            return mixture(config, arch, tiedEmbeddings);
        }
        Variant v = variant(config.modelType(), Rope.Style.HALVES, tiedEmbeddings);
        return v == null ? null : plan(v);
    }

    /**
     * Gemma 2 and 3: the embedding scaled by √hidden; RMSNorm before and after attention and the MLP; per-head q and k
     * norms (Gemma 3's); GeGLU; optionally soft-capped logits. Its norm weights are stored with Gemma's {@code 1 + w}
     * already added, as llama.cpp's converter writes them. Which layers attend through the sliding window, and their
     * RoPE base, come from the config, not the plan.
     */
    static Plan gemma(ModelConfig config, Architecture arch, boolean tied) {
        Map<String, Plan.Dim> buffers = buffers();
        List<Op> layer = new ArrayList<>();
        layer.add(new Op.RmsNorm("x", ATTN_NORM, "xb", false));
        for (String p : List.of("q", "k", "v")) {
            layer.add(new Op.MatMul(projection(p), "xb", p, false));
        }
        if (arch.qkNorm()) {
            layer.add(new Op.RmsNorm("q", Q_NORM, "q", true));
            layer.add(new Op.RmsNorm("k", K_NORM, "k", true));
        }
        layer.add(new Op.RotaryEmbedding("q", "k", Rope.Style.HALVES));
        layer.add(new Op.Attention("q", "k", "v", "att"));
        layer.add(new Op.MatMul(O_PROJ, "att", "xb", false));
        layer.add(new Op.RmsNorm("xb", POST_ATTN_NORM, "xb", false));
        layer.add(new Op.Add("x", "xb"));
        layer.add(new Op.RmsNorm("x", PRE_FFN_NORM, "xb", false));
        layer.add(new Op.MatMul(GATE_PROJ, "xb", "hb", false));
        layer.add(new Op.MatMul(UP_PROJ, "xb", "hb2", false));
        layer.add(new Op.GeluMul("hb", "hb2"));
        layer.add(new Op.MatMul(DOWN_PROJ, "hb", "xb", false));
        layer.add(new Op.RmsNorm("xb", POST_FFN_NORM, "xb", false));
        layer.add(new Op.Add("x", "xb"));
        List<Op> epilogue = new ArrayList<>(List.of(
                new Op.RmsNorm("x", FINAL_NORM, "xb", false),
                new Op.MatMul(tied ? EMBEDDING : HEAD, "xb", "logits", true)));
        if (config.finalLogitSoftcapping() > 0) {
            epilogue.add(new Op.SoftCap("logits", config.finalLogitSoftcapping()));
        }
        // llama.cpp scales by √hidden in single precision
        List<Op> prologue = List.of(new Op.Embed(EMBEDDING, "x"),
                new Op.Scale("x", (float) Math.sqrt(config.hiddenSize())));
        return new Plan(buffers, prologue, layer, epilogue, "logits");
    }

    /** A mixture's router and its experts' matrices, with {@code {L}} and {@code {E}}. */
    public static final String ROUTER = LAYER + "mlp.gate.weight";
    public static final String EXPERT_GATE = LAYER + "mlp.experts.{E}.gate_proj.weight";
    public static final String EXPERT_UP = LAYER + "mlp.experts.{E}.up_proj.weight";
    public static final String EXPERT_DOWN = LAYER + "mlp.experts.{E}.down_proj.weight";

    /**
     * A mixture of experts: the attention of Qwen3 (q/k norms; {@code qwen3_moe}) or llama (Mixtral), then a
     * {@code moe} op in place of the MLP.
     */
    static Plan mixture(ModelConfig config, Architecture arch, boolean tied) {
        Plan dense = plan(new Variant(arch.qkvBias(), arch.qkNorm(), Rope.Style.HALVES, tied));
        Map<String, Plan.Dim> buffers = new LinkedHashMap<>(dense.buffers());
        buffers.put("router", Plan.Dim.EXPERTS);
        buffers.put("moe_x", Plan.Dim.HIDDEN);
        buffers.put("moe_y", Plan.Dim.HIDDEN);
        buffers.put("moe", Plan.Dim.HIDDEN);
        List<Op> layer = new ArrayList<>();
        for (Op op : dense.layer()) {
            layer.add(op);
            if (op instanceof Op.RmsNorm n && n.weight().equals(FFN_NORM)) {
                break;
            }
        }
        var experts = config.experts();
        layer.add(new Op.Moe("xb", "moe", ROUTER, EXPERT_GATE, EXPERT_UP, EXPERT_DOWN, experts.count(),
                experts.perToken(), experts.normalize()));
        layer.add(new Op.Add("x", "moe"));
        return new Plan(buffers, dense.prologue(), layer, dense.epilogue(), "logits");
    }

    private static Map<String, Plan.Dim> buffers() {
        Map<String, Plan.Dim> buffers = new LinkedHashMap<>();
        buffers.put("x", Plan.Dim.HIDDEN);
        buffers.put("xb", Plan.Dim.HIDDEN);
        buffers.put("q", Plan.Dim.Q);
        buffers.put("k", Plan.Dim.KV);
        buffers.put("v", Plan.Dim.KV);
        buffers.put("att", Plan.Dim.Q);
        buffers.put("hb", Plan.Dim.FFN);
        buffers.put("hb2", Plan.Dim.FFN);
        buffers.put("logits", Plan.Dim.VOCAB);
        return buffers;
    }

    public static Plan plan(Variant v) {
        Map<String, Plan.Dim> buffers = buffers();

        List<Op> layer = new ArrayList<>();
        layer.add(new Op.RmsNorm("x", ATTN_NORM, "xb", false));
        for (String p : List.of("q", "k", "v")) {
            layer.add(new Op.MatMul(projection(p), "xb", p, false));
            if (v.qkvBias()) {
                layer.add(new Op.AddBias(projectionBias(p), p));
            }
        }
        if (v.qkNorm()) {
            layer.add(new Op.RmsNorm("q", Q_NORM, "q", true));
            layer.add(new Op.RmsNorm("k", K_NORM, "k", true));
        }
        layer.add(new Op.RotaryEmbedding("q", "k", v.ropeStyle()));
        layer.add(new Op.Attention("q", "k", "v", "att"));
        layer.add(new Op.MatMul(O_PROJ, "att", "xb", false));
        layer.add(new Op.Add("x", "xb"));
        layer.add(new Op.RmsNorm("x", FFN_NORM, "xb", false));
        layer.add(new Op.MatMul(GATE_PROJ, "xb", "hb", false));
        layer.add(new Op.MatMul(UP_PROJ, "xb", "hb2", false));
        layer.add(new Op.SiluMul("hb", "hb2"));
        layer.add(new Op.MatMul(DOWN_PROJ, "hb", "xb", false));
        layer.add(new Op.Add("x", "xb"));

        String head = v.tiedEmbeddings() ? EMBEDDING : HEAD;
        List<Op> epilogue = List.of(
                new Op.RmsNorm("x", FINAL_NORM, "xb", false),
                new Op.MatMul(head, "xb", "logits", true));
        return new Plan(buffers, List.of(new Op.Embed(EMBEDDING, "x")), layer, epilogue, "logits");
    }
}
