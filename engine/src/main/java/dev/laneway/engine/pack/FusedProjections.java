package dev.laneway.engine.pack;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.plan.StandardPlans;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A mixture's experts stored as one tensor per matrix kind (GGUF's {@code ffn_gate_exps}: {@code [experts, ffn,
 * hidden]}) become one matrix per expert, {@code mlp.experts.{E}.gate_proj.weight} and so on, each a slab of the same
 * bytes. Phi-3 stores each layer's q, k and v projections as one matrix ({@code qkv_proj}: q rows, then k, then v) and
 * its gate and up projections as one ({@code gate_up_proj}: gate rows, then up). A container keeps them split, under
 * the llama names every forward reads: the same bytes, row ranges of the fused matrix, so nothing is recomputed.
 */
final class FusedProjections {
    /** The fused matrices' names, with {@code {L}} for the layer, in Hugging Face's names. */
    static final String QKV = "self_attn.qkv_proj.weight";
    static final String GATE_UP = "mlp.gate_up_proj.weight";
    /** A mixture's experts' matrices stacked {@code [experts, rows, cols]}, as GGUF files store them. */
    static final String EXPERTS_GATE = "mlp.experts.gate_proj.weight";
    static final String EXPERTS_UP = "mlp.experts.up_proj.weight";
    static final String EXPERTS_DOWN = "mlp.experts.down_proj.weight";
    private static final Pattern LAYER = Pattern.compile("model\\.layers\\.(\\d+)\\.(.+)");

    private FusedProjections() {
    }

    /**
     * {@code tensors} in order, each fused matrix replaced by its parts.
     *
     * @throws FormatException naming a fused matrix whose rows do not add up to its parts'
     */
    static Map<String, Tensor> split(Map<String, Tensor> tensors, ModelConfig config, Path source)
            throws FormatException {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Matcher m = LAYER.matcher(e.getKey());
            String part = m.matches() ? m.group(2) : "";
            Tensor t = e.getValue();
            if (part.equals(QKV)) {
                int layer = Integer.parseInt(m.group(1));
                long q = config.queryDim();
                long kv = config.kvDim();
                requireRows(t, q + 2 * kv, e.getKey(), source);
                put(out, StandardPlans.projection("q"), layer, t, 0, q);
                put(out, StandardPlans.projection("k"), layer, t, q, kv);
                put(out, StandardPlans.projection("v"), layer, t, q + kv, kv);
            } else if (part.equals(GATE_UP)) {
                int layer = Integer.parseInt(m.group(1));
                long ffn = config.intermediateSize();
                requireRows(t, 2 * ffn, e.getKey(), source);
                put(out, StandardPlans.GATE_PROJ, layer, t, 0, ffn);
                put(out, StandardPlans.UP_PROJ, layer, t, ffn, ffn);
            } else if (part.equals(EXPERTS_GATE) || part.equals(EXPERTS_UP) || part.equals(EXPERTS_DOWN)) {
                int count = config.experts().count();
                if (t.rank() != 3 || t.dim(0) != count) {
                    throw new FormatException(source, e.getKey() + " " + java.util.Arrays.toString(t.shape())
                            + " does not stack the config's " + count + " experts");
                }
                String matrix = part.substring("mlp.experts.".length());
                for (int x = 0; x < count; x++) {
                    String name = "model.layers." + m.group(1) + ".mlp.experts." + x + "." + matrix;
                    out.put(name, t.slab(name, x));
                }
            } else {
                out.put(e.getKey(), t);
            }
        }
        return out;
    }

    private static void requireRows(Tensor t, long rows, String name, Path source) throws FormatException {
        if (t.rank() != 2 || t.dim(0) != rows) {
            throw new FormatException(source, name + " " + java.util.Arrays.toString(t.shape()) + " is not a fused"
                    + " matrix of " + rows + " rows, as the config's sizes give");
        }
    }

    private static void put(Map<String, Tensor> out, String template, int layer, Tensor fused, long from,
                            long rows) {
        String name = StandardPlans.ofLayer(template, layer);
        out.put(name, fused.rows(name, from, rows));
    }
}
