package dev.laneway.engine.pack;

import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.GgufConfig;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.DeclaredPooling;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nx;
import dev.laneway.engine.tokenizer.GgufTokenizerConverter;
import dev.laneway.engine.tokenizer.HfTokenizerFiles;
import dev.laneway.spi.ModelPacker;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Pooling;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;

/**
 * Packs a GGUF file into a container: {@code config.json} from its metadata, {@code tokenizer.json} and
 * {@code tokenizer_config.json} from its vocabulary, {@code plan.json} for its architecture, and {@code model.q4nx}
 * with its tensors under their Hugging Face names and, for llama models, their q/k rows back in Hugging Face's order
 * (see {@link #qkRowOrders}), so every plan rotates halves.
 */
public final class GgufPacker implements ModelPacker {

    @Override
    public boolean reads(Path source) {
        if (!Files.isRegularFile(source)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(source)) {
            return Arrays.equals(in.readNBytes(4), "GGUF".getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void pack(Path sourcePath, Path target, PackOptions options, PackProgress progress) throws IOException {
        GgufFile gguf = GgufFile.open(sourcePath);
        ModelConfig config = GgufConfig.from(gguf);
        Map<String, Tensor> source = FusedProjections.split(hfTensors(gguf, config.modelType()), config, sourcePath);
        boolean tied = !source.containsKey(StandardPlans.HEAD);
        config = config.withTiedEmbeddings(tied);
        Function<DType, Quant> quant = Quant.chosen(options.quant(), matrixTypes(source));
        Map<String, Tensor> tensors = ContainerWriter.withHead(source, quant);
        var plan = StandardPlans.plan(config, !tensors.containsKey(StandardPlans.HEAD));
        if (plan == null) {
            throw new FormatException(sourcePath, "architecture " + config.modelType() + " cannot be packed (known: "
                    + String.join(", ", Architecture.all()) + ")");
        }
        HfTokenizerFiles tokenizer = GgufTokenizerConverter.convert(gguf);
        Optional<Pooling> pooling = DeclaredPooling.of(gguf, gguf.string("general.architecture").orElse(""));
        if (pooling.orElse(null) == Pooling.RANK && !source.containsKey(StandardPlans.RANKING_HEAD)) {
            throw new FormatException(sourcePath, "declares rank pooling (a reranker) but has no ranking head:"
                    + " cls.output.weight is missing");
        }
        try (AtomicDirectory out = AtomicDirectory.begin(target)) {
            ConfigJson.write(config, out.dir().resolve(Container.CONFIG));
            Files.writeString(out.dir().resolve(Container.TOKENIZER), tokenizer.tokenizerJson());
            Files.writeString(out.dir().resolve(Container.TOKENIZER_CONFIG), tokenizer.tokenizerConfigJson());
            PlanJson.write(plan, out.dir().resolve(Container.PLAN));
            if (pooling.isPresent()) {
                DeclaredPooling.write(pooling.get(), config.hiddenSize(), out.dir());
            }
            ContainerWriter.write(out.dir(), tensors, qkRowOrders(config), quant, Map.of("source",
                    sourcePath.getFileName().toString(), Q4nx.ROPE_PAIRS_KEY, "halves"), progress);
            if (options.lane()) {
                LaneManifests.writeHost(out.dir(), config);
            }
            out.commit();
        }
    }

    /**
     * The tensors a container keeps, under their Hugging Face names, in file order.
     *
     * @throws FormatException naming a tensor Laneway does not know: dropping it could change the computation
     */
    static Map<String, Tensor> hfTensors(GgufFile gguf, String architecture) throws FormatException {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Tensor t : gguf.tensors()) {
            if (GgufConfig.CONFIG_TENSORS.contains(t.name())) {
                continue;  // read into config.json's rope_scaling
            }
            var hf = GgufNames.toHuggingFace(t.name(), architecture);
            if (hf.isEmpty()) {
                throw new FormatException(gguf.path(), "tensor " + t.name() + " is not one Laneway knows for "
                        + "this architecture; it is refused rather than dropped");
            }
            tensors.put(hf.get(), t);
        }
        if (!tensors.containsKey("model.embed_tokens.weight")) {
            throw new FormatException(gguf.path(), "no token_embd.weight tensor: not a language model");
        }
        return tensors;
    }

    /**
     * The q/k row orders that give Hugging Face's: llama.cpp's converter reorders a llama model's q and k rows so that
     * each head's rotated pairs are adjacent (interleaved RoPE); the container puts them back, so every container
     * rotates halves and other engines that read it in Hugging Face's order get the same numbers. Qwen files keep
     * Hugging Face's order, as do Gemma's.
     */
    public static Map<String, IntUnaryOperator> qkRowOrders(ModelConfig config) {
        if (!config.architecture().map(Architecture::interleavedGguf).orElse(false)) {
            return Map.of();
        }
        int headDim = config.headDim();
        IntUnaryOperator toHalves = row -> {
            int head = row / headDim;
            int j = row % headDim;
            int half = headDim / 2;
            return head * headDim + (j < half ? 2 * j : 2 * (j - half) + 1);
        };
        Map<String, IntUnaryOperator> orders = new LinkedHashMap<>();
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            orders.put(StandardPlans.projection("q").replace("{L}", Integer.toString(l)), toHalves);
            orders.put(StandardPlans.projection("k").replace("{L}", Integer.toString(l)), toHalves);
        }
        return orders;
    }

    static List<DType> matrixTypes(Map<String, Tensor> tensors) {
        return tensors.values().stream().filter(t -> t.rank() == 2).map(Tensor::dtype).distinct().toList();
    }
}
