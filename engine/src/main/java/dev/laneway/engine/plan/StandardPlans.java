package dev.laneway.engine.plan;

import dev.laneway.engine.kernels.Rope;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The plans of the dense llama-family architectures, in Hugging Face tensor names: llama and mistral (plain), qwen2
 * (q/k/v biases), qwen3 (per-head q/k RMSNorm).
 */
public final class StandardPlans {
    private static final String LAYER = "model.layers.{L}.";

    private StandardPlans() {
    }

    /** What distinguishes the architectures' layers. */
    public record Variant(boolean qkvBias, boolean qkNorm, Rope.Style ropeStyle, boolean tiedEmbeddings) {
    }

    /** The variant of a Hugging Face {@code model_type}, or null when it is not a dense llama-family one. */
    public static Variant variant(String modelType, Rope.Style ropeStyle, boolean tied) {
        return switch (modelType) {
            case "llama", "mistral" -> new Variant(false, false, ropeStyle, tied);
            case "qwen2" -> new Variant(true, false, ropeStyle, tied);
            case "qwen3" -> new Variant(false, true, ropeStyle, tied);
            default -> null;
        };
    }

    /** The architectures {@link #variant} knows. */
    public static List<String> architectures() {
        return List.of("llama", "mistral", "qwen2", "qwen3");
    }

    public static Plan plan(Variant v) {
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

        List<Op> layer = new ArrayList<>();
        layer.add(new Op.RmsNorm("x", LAYER + "input_layernorm.weight", "xb", false));
        for (String p : List.of("q", "k", "v")) {
            layer.add(new Op.MatMul(LAYER + "self_attn." + p + "_proj.weight", "xb", p, false));
            if (v.qkvBias()) {
                layer.add(new Op.AddBias(LAYER + "self_attn." + p + "_proj.bias", p));
            }
        }
        if (v.qkNorm()) {
            layer.add(new Op.RmsNorm("q", LAYER + "self_attn.q_norm.weight", "q", true));
            layer.add(new Op.RmsNorm("k", LAYER + "self_attn.k_norm.weight", "k", true));
        }
        layer.add(new Op.RotaryEmbedding("q", "k", v.ropeStyle()));
        layer.add(new Op.Attention("q", "k", "v", "att"));
        layer.add(new Op.MatMul(LAYER + "self_attn.o_proj.weight", "att", "xb", false));
        layer.add(new Op.Add("x", "xb"));
        layer.add(new Op.RmsNorm("x", LAYER + "post_attention_layernorm.weight", "xb", false));
        layer.add(new Op.MatMul(LAYER + "mlp.gate_proj.weight", "xb", "hb", false));
        layer.add(new Op.MatMul(LAYER + "mlp.up_proj.weight", "xb", "hb2", false));
        layer.add(new Op.SiluMul("hb", "hb2"));
        layer.add(new Op.MatMul(LAYER + "mlp.down_proj.weight", "hb", "xb", false));
        layer.add(new Op.Add("x", "xb"));

        String head = v.tiedEmbeddings() ? "model.embed_tokens.weight" : "lm_head.weight";
        List<Op> epilogue = List.of(
                new Op.RmsNorm("x", "model.norm.weight", "xb", false),
                new Op.MatMul(head, "xb", "logits", true));
        return new Plan(buffers, List.of(new Op.Embed("model.embed_tokens.weight", "x")), layer, epilogue, "logits");
    }
}
