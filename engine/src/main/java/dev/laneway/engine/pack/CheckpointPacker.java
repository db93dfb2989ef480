package dev.laneway.engine.pack;

import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.DeclaredPooling;
import dev.laneway.spi.Pooling;
import java.util.Optional;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nx;
import dev.laneway.engine.safetensors.SafetensorsCheckpoint;
import dev.laneway.spi.ModelPacker;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Packs a Hugging Face checkpoint directory ({@code config.json}, {@code *.safetensors}, {@code tokenizer.json}) into
 * a container. The config and tokenizer files are carried over; Hugging Face q/k weights rotate halves. A tied
 * embedding stored only as {@code lm_head.weight} becomes {@code model.embed_tokens.weight}; Phi-3's fused
 * projections are split ({@link FusedProjections}), Mixtral's experts take Qwen3-MoE's names, and Gemma 3's norm
 * weights w become the 1 + w its RMSNorm multiplies by.
 */
public final class CheckpointPacker implements ModelPacker {
    private static final String EMBED = "model.embed_tokens.weight";
    private static final String HEAD = "lm_head.weight";

    @Override
    public boolean reads(Path source) {
        return Files.isDirectory(source) && Files.isRegularFile(source.resolve(Container.CONFIG))
                && Files.isRegularFile(source.resolve(Container.TOKENIZER))
                && (Files.isRegularFile(source.resolve(SafetensorsCheckpoint.SINGLE_FILE))
                || Files.isRegularFile(source.resolve(SafetensorsCheckpoint.INDEX_FILE)));
    }

    @Override
    public void pack(Path source, Path target, PackOptions options, PackProgress progress) throws IOException {
        ModelConfig config = ConfigJson.read(source.resolve(Container.CONFIG));
        if (config.architecture().isEmpty()) {
            throw new FormatException(source.resolve(Container.CONFIG), "model_type " + config.modelType()
                    + " cannot be packed (known: " + String.join(", ", Architecture.all()) + ")");
        }
        if (config.attentionBias() && !config.architecture().map(Architecture::qkvBias).orElse(false)) {
            throw new FormatException(source.resolve(Container.CONFIG), "attention_bias is not supported for "
                    + config.modelType());
        }
        SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(source);
        Map<String, Tensor> untied = FusedProjections.split(tensors(checkpoint, config, source), config, source);
        Function<DType, Quant> quant = Quant.chosen(options.quant(), GgufPacker.matrixTypes(untied));
        Map<String, Tensor> tensors = ContainerWriter.withHead(untied, quant);
        var plan = StandardPlans.plan(config, !tensors.containsKey(HEAD));
        Optional<Pooling> pooling = DeclaredPooling.read(source);
        try (AtomicDirectory out = AtomicDirectory.begin(target)) {
            ConfigJson.write(config, out.dir().resolve(Container.CONFIG));
            if (pooling.isPresent()) {
                DeclaredPooling.write(pooling.get(), config.hiddenSize(), out.dir());
            }
            Files.copy(source.resolve(Container.TOKENIZER), out.dir().resolve(Container.TOKENIZER),
                    StandardCopyOption.COPY_ATTRIBUTES);
            Path tokenizerConfig = source.resolve(Container.TOKENIZER_CONFIG);
            if (Files.isRegularFile(tokenizerConfig)) {
                Files.copy(tokenizerConfig, out.dir().resolve(Container.TOKENIZER_CONFIG));
            }
            PlanJson.write(plan, out.dir().resolve(Container.PLAN));
            ContainerWriter.write(out.dir(), tensors, quant, Map.of("source", source.getFileName().toString(),
                    Q4nx.ROPE_PAIRS_KEY, "halves"), progress);
            if (options.lane()) {
                LaneManifests.writeHost(out.dir(), config);
            }
            out.commit();
        }
    }

    /**
     * A Gemma norm's weight w as its plan reads it, 1 + w (Gemma's RMSNorm scales by 1 + w; GGUF files store the sum
     * too): F32, since adding 1 to a 16-bit w would round it.
     */
    private static Tensor shifted(Tensor norm) {
        float[] w = Dequant.toFloat(norm);
        ByteBuffer bytes = ByteBuffer.allocate(w.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : w) {
            bytes.putFloat(1f + v);
        }
        return new Tensor(norm.name(), DType.F32, norm.shape(), bytes.flip());
    }

    /**
     * A Mixtral tensor under the names a container gives a mixture (Qwen3-MoE's): {@code block_sparse_moe} is
     * {@code mlp}, and an expert's {@code w1}, {@code w3} and {@code w2} are its gate, up and down projections.
     */
    static String mixtralName(String name) {
        return name.replace(".block_sparse_moe.", ".mlp.").replaceFirst("(\\.mlp\\.experts\\.\\d+)\\.w1\\.weight$",
                "$1.gate_proj.weight").replaceFirst("(\\.mlp\\.experts\\.\\d+)\\.w3\\.weight$", "$1.up_proj.weight")
                .replaceFirst("(\\.mlp\\.experts\\.\\d+)\\.w2\\.weight$", "$1.down_proj.weight");
    }

    /** The tensors to keep, with a tied embedding under the embedding's name only. */
    private static Map<String, Tensor> tensors(SafetensorsCheckpoint checkpoint, ModelConfig config, Path source)
            throws FormatException {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        boolean mixtral = config.architecture().map(Architecture::mixture).map(Architecture.Mixture::sparseMoeBlock)
                .orElse(false);
        checkpoint.tensors().forEach((name, t) -> {
            if (!name.endsWith("rotary_emb.inv_freq")) {
                tensors.put(mixtral ? mixtralName(name) : name, t);
            }
        });
        if (!tensors.containsKey(EMBED)) {
            Tensor head = tensors.get(HEAD);
            if (head == null || !config.tieWordEmbeddings()) {
                throw new FormatException(source, "the checkpoint has no " + EMBED
                        + (config.tieWordEmbeddings() ? " nor " + HEAD : ""));
            }
            tensors.put(EMBED, head);
        }
        if (config.architecture().map(Architecture::gemma).orElse(false)) {
            tensors.replaceAll((name, t) -> name.endsWith("norm.weight") ? shifted(t) : t);
        }
        if (config.tieWordEmbeddings()) {
            tensors.remove(HEAD);
        } else if (!tensors.containsKey(HEAD)) {
            throw new FormatException(source, "tie_word_embeddings is false but the checkpoint has no " + HEAD);
        }
        return tensors;
    }
}
