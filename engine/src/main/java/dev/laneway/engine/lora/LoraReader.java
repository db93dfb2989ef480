package dev.laneway.engine.lora;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.JsonObjects;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.pack.GgufNames;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.quant.RowDecoder;
import dev.laneway.engine.safetensors.SafetensorsFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;

/**
 * Reads LoRA adapters for a base model: GGUF adapter files as llama.cpp's converter writes them, and PEFT
 * checkpoints ({@code adapter_config.json} and {@code adapter_model.safetensors}). Pairs are named by the base
 * model's matrices; whether the model multiplies by them, and at which shapes, the forward checks when the adapter
 * is loaded. Anything that would change the computation and is not read here is refused by name.
 */
public final class LoraReader {
    /** PEFT's config file and weights. */
    public static final String PEFT_CONFIG = "adapter_config.json";
    public static final String PEFT_WEIGHTS = "adapter_model.safetensors";
    private static final String PEFT_PREFIX = "base_model.model.";
    /** PEFT config keys that do not change what the adapter computes at inference, or that the tensors settle. */
    private static final Set<String> PEFT_INERT = Set.of("base_model_name_or_path", "revision", "task_type",
            "inference_mode", "lora_dropout", "auto_mapping", "peft_version", "init_lora_weights", "target_modules",
            "exclude_modules", "layers_to_transform", "layers_pattern", "megatron_config", "megatron_core",
            "loftq_config", "eva_config", "corda_config", "rank_pattern", "peft_type", "r", "lora_alpha",
            "use_rslora", "bias", "fan_in_fan_out", "use_dora", "modules_to_save", "alpha_pattern", "runtime_config",
            "qalora_group_size");

    private LoraReader() {
    }

    /**
     * The adapter at {@code path}: a GGUF file, or a directory holding a PEFT checkpoint.
     *
     * @throws FormatException naming what is wrong or not supported
     */
    public static LoraAdapter read(String name, Path path, ModelConfig base) throws IOException {
        if (Files.isDirectory(path)) {
            return peft(name, path, base);
        }
        if (!Files.isRegularFile(path)) {
            throw new FormatException(path, "no such adapter file or PEFT directory");
        }
        return gguf(name, path, base);
    }

    /** A GGUF adapter file: {@code general.type} adapter, {@code adapter.type} lora, pairs {@code X.lora_a/_b}. */
    static LoraAdapter gguf(String name, Path path, ModelConfig base) throws IOException {
        GgufFile g = GgufFile.open(path);
        String type = g.string("general.type").orElse("");
        if (!type.equals("adapter")) {
            throw new FormatException(path, "general.type is '" + type + "', not 'adapter': not a LoRA adapter");
        }
        String adapterType = g.string("adapter.type").orElse("");
        if (!adapterType.equals("lora")) {
            throw new FormatException(path, "adapter.type is '" + adapterType + "'; Laneway applies 'lora' adapters");
        }
        if (g.get("adapter.alora.invocation_tokens").isPresent()) {
            throw new FormatException(path, "adapter.alora.invocation_tokens: activated LoRA (applied from an "
                    + "invocation sequence on) is not supported");
        }
        String arch = g.string("general.architecture").orElse("");
        Architecture architecture = base.architecture().orElseThrow(() -> new FormatException(path,
                "the model's architecture " + base.modelType() + " takes no adapters"));
        if (!Architecture.allOfGguf(arch).contains(architecture)) {
            throw new FormatException(path, "the adapter is for architecture '" + arch + "', the model is "
                    + architecture.ggufName());
        }
        float alpha = g.number("adapter.lora.alpha").orElse(0.0).floatValue();
        Map<String, Tensor[]> halves = new LinkedHashMap<>();
        for (Tensor t : g.tensors()) {
            int half = t.name().endsWith(".lora_a") ? 0 : t.name().endsWith(".lora_b") ? 1 : -1;
            if (half < 0) {
                throw new FormatException(path, "tensor " + t.name() + " is neither a .lora_a nor a .lora_b");
            }
            String matrix = t.name().substring(0, t.name().length() - ".lora_a".length());
            halves.computeIfAbsent(matrix, m -> new Tensor[2])[half] = t;
        }
        // llama.cpp's converter reorders q and k rows of llama files; the container holds Hugging Face's order
        Map<String, IntUnaryOperator> orders = GgufPacker.qkRowOrders(base);
        Map<String, LoraAdapter.Pair> pairs = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor[]> e : halves.entrySet()) {
            String matrix = GgufNames.toHuggingFace(e.getKey(), base.modelType()).orElseThrow(() ->
                    new FormatException(path, "tensor " + e.getKey() + " is not a matrix Laneway knows"));
            pairs.put(matrix, pair(path, e.getKey(), matrix, e.getValue(), orders.get(matrix), alpha, false));
        }
        return adapter(name, path, alpha, pairs);
    }

    /** A PEFT checkpoint: {@code adapter_config.json} (peft_type LORA) and {@code adapter_model.safetensors}. */
    static LoraAdapter peft(String name, Path dir, ModelConfig base) throws IOException {
        Path configFile = dir.resolve(PEFT_CONFIG);
        if (!Files.isRegularFile(configFile)) {
            throw new FormatException(dir, "no " + PEFT_CONFIG + ": not a PEFT adapter directory");
        }
        JsonNode config = JsonObjects.read(configFile, Files.readAllBytes(configFile), "a PEFT adapter config");
        String type = config.path("peft_type").asText("");
        if (!type.equals("LORA")) {
            throw new FormatException(configFile, "peft_type is '" + type + "'; Laneway applies LORA adapters");
        }
        refuseIfSet(configFile, config, "use_dora", "DoRA adapters are not supported");
        refuseIfSet(configFile, config, "fan_in_fan_out", "transposed (Conv1D) layers are not supported");
        refuseIfSet(configFile, config, "modules_to_save", "modules saved whole are not supported");
        refuseIfSet(configFile, config, "alpha_pattern", "per-module alphas are not supported");
        String bias = config.path("bias").asText("none");
        if (!bias.equals("none")) {
            throw new FormatException(configFile, "bias '" + bias + "': adapters that train biases are not supported");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = config.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            if (!PEFT_INERT.contains(f.getKey()) && isSet(f.getValue())) {
                throw new FormatException(configFile, f.getKey() + " is set; Laneway does not apply it");
            }
        }
        float alpha = (float) config.path("lora_alpha").asDouble(0);
        boolean rslora = config.path("use_rslora").asBoolean(false);
        Path weights = dir.resolve(PEFT_WEIGHTS);
        if (!Files.isRegularFile(weights)) {
            throw new FormatException(dir, "no " + PEFT_WEIGHTS);
        }
        SafetensorsFile file = SafetensorsFile.open(weights);
        Map<String, Tensor[]> halves = new TreeMap<>();
        for (Tensor t : file.tensors()) {
            String n = t.name();
            int half = n.endsWith(".lora_A.weight") ? 0 : n.endsWith(".lora_B.weight") ? 1 : -1;
            if (half < 0 || !n.startsWith(PEFT_PREFIX)) {
                throw new FormatException(weights, "tensor " + n + " is not a LoRA pair's lora_A or lora_B weight");
            }
            String matrix = n.substring(PEFT_PREFIX.length(), n.length() - ".lora_A.weight".length()) + ".weight";
            halves.computeIfAbsent(matrix, m -> new Tensor[2])[half] = t;
        }
        Map<String, LoraAdapter.Pair> pairs = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor[]> e : halves.entrySet()) {
            pairs.put(e.getKey(), pair(weights, e.getKey(), e.getKey(), e.getValue(), null, alpha, rslora));
        }
        return adapter(name, dir, alpha, pairs);
    }

    private static LoraAdapter adapter(String name, Path path, float alpha, Map<String, LoraAdapter.Pair> pairs)
            throws FormatException {
        if (pairs.isEmpty()) {
            throw new FormatException(path, "the adapter changes no matrix");
        }
        return new LoraAdapter(name, path, alpha, pairs);
    }

    private static LoraAdapter.Pair pair(Path path, String named, String matrix, Tensor[] ab, IntUnaryOperator bRows,
                                         float alpha, boolean rslora) throws FormatException {
        if (ab[0] == null || ab[1] == null) {
            throw new FormatException(path, named + " has only one of its LoRA pair");
        }
        Tensor a = ab[0];
        Tensor b = ab[1];
        if (a.rank() != 2 || b.rank() != 2 || a.dim(0) != b.dim(1) || !Dequant.supports(a.dtype())
                || !Dequant.supports(b.dtype())) {
            throw new FormatException(path, named + ": expected lora_a [rank, in] and lora_b [out, rank] of a float or"
                    + " block type, got " + a + " and " + b);
        }
        int rank = (int) a.dim(0);
        int in = (int) a.dim(1);
        int out = (int) b.dim(0);
        float[] bValues = new float[out * rank];
        RowDecoder rows = bRows == null ? new RowDecoder(b) : new RowDecoder(b, bRows);
        for (int r = 0; r < out; r++) {
            rows.read(r, bValues, r * rank);
        }
        float scale = alpha == 0 ? 1f : rslora ? alpha / (float) Math.sqrt(rank) : alpha / rank;
        boolean half = a.dtype() == dev.laneway.engine.format.DType.F16 && b.dtype() == dev.laneway.engine.format.DType.F16;
        return LoraAdapter.Pair.of(matrix, Dequant.toFloat(a), bValues, rank, in, out, scale, half);
    }

    private static void refuseIfSet(Path file, JsonNode config, String key, String why) throws FormatException {
        if (isSet(config.path(key))) {
            throw new FormatException(file, key + ": " + why);
        }
    }

    /** Whether a config value asks for something: not missing, null, false, or empty. */
    private static boolean isSet(JsonNode v) {
        if (v.isMissingNode() || v.isNull()) {
            return false;
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isContainerNode()) {
            return !v.isEmpty();
        }
        return !v.isTextual() || !v.asText().isEmpty();
    }
}
