package dev.laneway.engine.pack;

import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.plan.StandardPlans;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** GGUF tensor names of llama-family models and their Hugging Face names, which containers use. */
public final class GgufNames {
    private static final Pattern BLOCK = Pattern.compile("blk\\.(\\d+)\\.(.+)");

    private GgufNames() {
    }

    /**
     * The name a container gives a GGUF tensor of a model of Hugging Face {@code model_type} {@code architecture}
     * (Hugging Face's, or {@code rope_freqs.weight}, which has no Hugging Face counterpart), or empty for a tensor
     * Laneway does not know. Gemma 3 normalises before and after attention and the MLP, so its {@code ffn_norm} is the
     * pre-MLP norm and {@code post_attention_norm} the norm after attention; it has no q/k/v biases. Phi-3's fused
     * {@code attn_qkv} and {@code ffn_up} (gate and up rows) take its Hugging Face names, {@code qkv_proj} and
     * {@code gate_up_proj}, which {@link FusedProjections} splits, as it splits a mixture's experts stored as one
     * tensor each ({@code ffn_gate_exps}, ...) and named by their experts' Hugging Face names.
     */
    public static Optional<String> toHuggingFace(String gguf, String architecture) {
        switch (gguf) {
            case RopeFrequencies.FACTORS_TENSOR:
                return Optional.of(RopeFrequencies.FACTORS_TENSOR);
            case "token_embd.weight":
                return Optional.of("model.embed_tokens.weight");
            case "output_norm.weight":
                return Optional.of("model.norm.weight");
            case "output.weight":
                return Optional.of("lm_head.weight");
            case "cls.output.weight":
                // a Qwen3 reranker's head, the one llama.cpp runs for a Qwen3 model
                return architecture.equals("qwen3") ? Optional.of(StandardPlans.RANKING_HEAD) : Optional.empty();
            default:
                break;
        }
        Matcher m = BLOCK.matcher(gguf);
        if (!m.matches()) {
            return Optional.empty();
        }
        String layer = "model.layers." + m.group(1) + ".";
        Optional<Architecture> arch = Architecture.of(architecture);
        boolean gemma = arch.map(Architecture::gemma).orElse(false);
        boolean fused = arch.map(Architecture::fusedProjections).orElse(false);
        String hf = switch (m.group(2)) {
            case "attn_qkv.weight" -> fused ? FusedProjections.QKV : null;
            case "ffn_norm.weight" -> gemma ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight";
            case "post_attention_norm.weight" -> gemma ? "post_attention_layernorm.weight" : null;
            case "post_ffw_norm.weight" -> gemma ? "post_feedforward_layernorm.weight" : null;
            case "attn_q.bias" -> gemma || fused ? null : "self_attn.q_proj.bias";
            case "attn_k.bias" -> gemma || fused ? null : "self_attn.k_proj.bias";
            case "attn_v.bias" -> gemma || fused ? null : "self_attn.v_proj.bias";
            case "attn_norm.weight" -> "input_layernorm.weight";
            case "attn_q.weight" -> "self_attn.q_proj.weight";
            case "attn_k.weight" -> "self_attn.k_proj.weight";
            case "attn_v.weight" -> "self_attn.v_proj.weight";
            case "attn_output.weight" -> "self_attn.o_proj.weight";
            case "attn_q_norm.weight" -> fused ? null : "self_attn.q_norm.weight";
            case "attn_k_norm.weight" -> fused ? null : "self_attn.k_norm.weight";
            case "ffn_gate.weight" -> fused ? null : "mlp.gate_proj.weight";
            case "ffn_up.weight" -> fused ? FusedProjections.GATE_UP : "mlp.up_proj.weight";
            case "ffn_down.weight" -> "mlp.down_proj.weight";
            case "ffn_gate_inp.weight" -> "mlp.gate.weight";
            case "ffn_gate_exps.weight" -> FusedProjections.EXPERTS_GATE;
            case "ffn_up_exps.weight" -> FusedProjections.EXPERTS_UP;
            case "ffn_down_exps.weight" -> FusedProjections.EXPERTS_DOWN;
            default -> null;
        };
        return Optional.ofNullable(hf).map(n -> layer + n);
    }
}
