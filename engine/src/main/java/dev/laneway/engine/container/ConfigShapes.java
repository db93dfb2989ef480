package dev.laneway.engine.container;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.plan.StandardPlans;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The logical rows × columns of each weight matrix of a dense llama-family model, by its Hugging Face name, from
 * config.json: what a tile tensor's padded tiles hide when the container does not record it (docs/container.md).
 */
public final class ConfigShapes {
    private static final Pattern LAYER = Pattern.compile("model\\.layers\\.\\d+\\.(.+)");

    private final ModelConfig config;

    public ConfigShapes(ModelConfig config) {
        this.config = config;
    }

    /** {@code [rows, cols]} of the weight {@code name}, or empty when it is no weight matrix of this architecture. */
    public Optional<int[]> of(String name) {
        int hidden = config.hiddenSize();
        int q = config.numAttentionHeads() * config.headDim();
        int kv = config.numKeyValueHeads() * config.headDim();
        int ffn = config.experts().present() ? config.experts().ffn() : config.intermediateSize();
        if (name.equals(StandardPlans.EMBEDDING) || name.equals(StandardPlans.HEAD)) {
            return shape(config.vocabSize(), hidden);
        }
        Matcher m = LAYER.matcher(name);
        if (!m.matches()) {
            return Optional.empty();
        }
        String part = m.group(1).replaceFirst("^mlp\\.experts\\.\\d+\\.", "mlp.");
        if (part.equals("mlp.gate.weight")) {
            return config.experts().present() ? shape(config.experts().count(), hidden) : Optional.empty();
        }
        return switch (part) {
            case "self_attn.q_proj.weight" -> shape(q, hidden);
            case "self_attn.k_proj.weight", "self_attn.v_proj.weight" -> shape(kv, hidden);
            case "self_attn.o_proj.weight" -> shape(hidden, q);
            case "mlp.gate_proj.weight", "mlp.up_proj.weight" -> shape(ffn, hidden);
            case "mlp.down_proj.weight" -> shape(hidden, ffn);
            default -> Optional.empty();
        };
    }

    private static Optional<int[]> shape(int rows, int cols) {
        return Optional.of(new int[]{rows, cols});
    }
}
