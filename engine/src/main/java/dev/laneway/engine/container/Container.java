package dev.laneway.engine.container;

import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.Architecture;
import dev.laneway.engine.config.Experts;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.plan.Plan;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nx;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * A container directory (docs/container.md): {@code model.q4nx}, {@code config.json}, {@code tokenizer.json} (with an
 * optional {@code tokenizer_config.json}), optionally {@code plan.json}, and optionally {@code npu/}. Opening reads the
 * config, the plan and the weight file's header, and maps the weights; nothing is copied. A container without a
 * Laneway plan (as the other Q4NX engines write them) gets the plan of its config's {@code model_type}; what was
 * derived so is listed by {@link #derivations()}.
 */
public final class Container {
    public static final String CONFIG = "config.json";
    public static final String TOKENIZER = "tokenizer.json";
    public static final String TOKENIZER_CONFIG = "tokenizer_config.json";
    public static final String PLAN = "plan.json";
    public static final String WEIGHTS = Q4nx.FILE_NAME;
    /** The lane directory of the fast lane. */
    public static final String LANE_DIR = "npu";

    private static final System.Logger LOG = System.getLogger(Container.class.getName());

    private final Path dir;
    private final ModelConfig config;
    private final Plan plan;
    private final Q4nxFile weights;
    private final List<String> derivations;

    private Container(Path dir, ModelConfig config, Plan plan, Q4nxFile weights, List<String> derivations) {
        this.dir = dir;
        this.config = config;
        this.plan = plan;
        this.weights = weights;
        this.derivations = List.copyOf(derivations);
    }

    /**
     * Opens a container directory.
     *
     * @throws FormatException naming the file and what is wrong when a part is missing or invalid
     */
    public static Container open(Path dir) throws IOException {
        for (String required : new String[]{WEIGHTS, CONFIG, TOKENIZER}) {
            if (!Files.isRegularFile(dir.resolve(required))) {
                throw new FormatException(dir, "not a container: " + required + " is missing");
            }
        }
        ModelConfig config = ConfigJson.read(dir.resolve(CONFIG));
        Q4nxFile weights = Q4nxFile.open(dir.resolve(WEIGHTS));
        List<String> derivations = new ArrayList<>();
        Optional<Plan> own = ownPlan(dir.resolve(PLAN), derivations);
        Plan plan = own.isPresent() ? own.get() : derivedPlan(dir, config, weights, derivations);
        config = vocabulary(config, weights, derivations);
        if (weights.tensors().stream().anyMatch(t -> weights.tiled(t.name())
                && weights.recordedShape(t.name()).isEmpty())) {
            derivations.add("tile tensors sized from config.json (the file records no shapes)");
        }
        if (ContainerWeights.embeddingFromHead(weights)) {
            derivations.add("the embedding read from lm_head.weight's tiles (the file has no "
                    + StandardPlans.EMBEDDING + ")");
        }
        return new Container(dir, config, plan, weights, derivations);
    }

    /** The container's own plan.json; empty when there is none, or it is another engine's file (said in the log). */
    private static Optional<Plan> ownPlan(Path file, List<String> derivations) throws IOException {
        if (!Files.isRegularFile(file)) {
            derivations.add("the plan from config.json's model_type (no plan.json)");
            return Optional.empty();
        }
        Optional<Plan> plan = PlanJson.readIfLaneways(file);
        if (plan.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, file + " is not a Laneway plan (its format is not \"" + Plan.FORMAT
                    + "\"): the plan comes from config.json's model_type");
            derivations.add("the plan from config.json's model_type (plan.json is not a Laneway plan)");
        }
        return plan;
    }

    /**
     * The standard plan of the config's architecture, for a container without one of Laneway's: q/k rows in the order
     * {@code __metadata__} {@code rope_pairs} says, else in Hugging Face's (the other Q4NX engines' converters write
     * them so), the head {@code lm_head.weight} when there is one. A tensor the plan would not read is refused by
     * name, never dropped.
     */
    private static Plan derivedPlan(Path dir, ModelConfig config, Q4nxFile weights, List<String> derivations)
            throws FormatException {
        String type = config.modelType();
        boolean tied = weights.tensor(StandardPlans.HEAD).isEmpty();
        String pairs = weights.metadata().getOrDefault(Q4nx.ROPE_PAIRS_KEY, "halves");
        Rope.Style rope = switch (pairs) {
            case "halves" -> Rope.Style.HALVES;
            case "interleaved" -> Rope.Style.INTERLEAVED;
            default -> throw new FormatException(weights.path(), "__metadata__ " + Q4nx.ROPE_PAIRS_KEY + " is \""
                    + pairs + "\", expected \"halves\" or \"interleaved\"");
        };
        StandardPlans.Variant variant = StandardPlans.variant(type, rope, tied);
        Plan plan = variant != null ? StandardPlans.plan(variant) : StandardPlans.plan(config, tied);
        if (plan == null) {
            throw new FormatException(dir, "no Laneway plan.json, and model_type '" + type + "' is not an architecture"
                    + " Laneway derives a plan for (" + String.join(", ", Architecture.all()) + ")");
        }
        if (variant == null && rope != Rope.Style.HALVES) {
            throw new FormatException(weights.path(), "__metadata__ " + Q4nx.ROPE_PAIRS_KEY + " \"" + pairs
                    + "\" is read for the llama family only; a " + type + " container rotates halves");
        }
        boolean biases = config.architecture().map(a -> a.qkvBias()).orElse(false);
        if (config.attentionBias() != biases) {
            throw new FormatException(dir.resolve(CONFIG), "attention_bias " + config.attentionBias()
                    + " is not in the " + type + " plan");
        }
        Set<String> read = new HashSet<>(Set.of(StandardPlans.EMBEDDING, StandardPlans.HEAD,
                RopeFrequencies.FACTORS_TENSOR));
        plan.prologue().forEach(op -> read.addAll(op.tensors()));
        plan.epilogue().forEach(op -> read.addAll(op.tensors()));
        int experts = config.experts().count();
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            String layer = Integer.toString(l);
            for (var op : plan.layer()) {
                for (String t : op.tensors()) {
                    String named = t.replace("{L}", layer);
                    for (int e = 0; e < Math.max(1, experts); e++) {
                        read.add(named.replace("{E}", Integer.toString(e)));
                    }
                }
            }
        }
        for (var t : weights.tensors()) {
            if (!read.contains(t.name())) {
                throw new FormatException(weights.path(), "tensor " + t.name() + " is not one the " + type
                        + " plan reads; it is refused rather than dropped");
            }
        }
        derivations.add(type + " layers" + (variant == null ? "" : (variant.qkvBias() ? " with q/k/v biases" : "")
                + (variant.qkNorm() ? " with q/k norms" : "")) + ", RoPE pairs in " + pairs + " order"
                + (weights.metadata().containsKey(Q4nx.ROPE_PAIRS_KEY) ? "" : " (Hugging Face's)") + ", the head "
                + (tied ? StandardPlans.EMBEDDING + " (tied)" : StandardPlans.HEAD));
        return plan;
    }

    /**
     * The config, with the vocabulary the embedding's rows give when config.json's {@code vocab_size} counts more (a
     * head padded to whole tiles): as the other Q4NX engines take it, and so padded rows are never sampled.
     */
    private static ModelConfig vocabulary(ModelConfig config, Q4nxFile weights, List<String> derivations) {
        Optional<Tensor> embedding = weights.tensor(StandardPlans.EMBEDDING).filter(t -> !weights.tiled(t.name())
                && t.rank() == 2);
        if (embedding.isEmpty() || embedding.get().dim(0) >= config.vocabSize()) {
            return config;
        }
        int rows = (int) embedding.get().dim(0);
        derivations.add("a vocabulary of " + rows + " tokens from the embedding's rows (config.json's vocab_size "
                + config.vocabSize() + " counts padding)");
        return config.withVocabSize(rows);
    }

    /** Whether the directory holds the files of a container (without reading them). */
    public static boolean looksLikeOne(Path dir) {
        return Files.isRegularFile(dir.resolve(WEIGHTS)) && Files.isRegularFile(dir.resolve(CONFIG));
    }

    /** What opening derived rather than read from the container (its plan, tile sizes, the vocabulary), if anything. */
    public List<String> derivations() {
        return derivations;
    }

    /** The forward's weights: matrices in place, tile tensors sized from config.json where the file does not say. */
    public ContainerWeights weightSource() {
        return new ContainerWeights(weights, this::tileShape);
    }

    public Path dir() {
        return dir;
    }

    public ModelConfig config() {
        return config;
    }

    public Plan plan() {
        return plan;
    }

    public Q4nxFile weights() {
        return weights;
    }

    /**
     * The forward's sizes, with a context of {@code contextLength} positions.
     *
     * @throws FormatException when the RoPE factors tensor does not fit the model
     */
    public Dims dims(int contextLength) throws FormatException {
        RopeFrequencies rope;
        try {
            rope = config.ropeFrequencies(weights.tensor(RopeFrequencies.FACTORS_TENSOR).map(Dequant::toFloat),
                    contextLength);
        } catch (IllegalArgumentException e) {
            throw new FormatException(weights.path(), e.getMessage());
        }
        Dims.SlidingWindow sliding = Dims.SlidingWindow.NONE;
        if (config.slidingWindow() > 0 && config.slidesEveryLayer()) {
            // a window as wide as the context changes nothing (Phi-4-mini's), and every layer then attends alike
            if (config.slidingWindow() < contextLength) {
                sliding = Dims.SlidingWindow.everyLayer(config.slidingWindow(), rope);
            }
        } else if (config.slidingWindow() > 0) {
            sliding = new Dims.SlidingWindow(config.slidingWindow(), config.slidingWindowPattern(),
                    config.localRopeFrequencies());
        }
        // a mixture's layers have no dense MLP: the MLP width the forward sizes is an expert's
        Experts experts = config.experts();
        return new Dims(config.hiddenSize(), config.numHiddenLayers(), config.numAttentionHeads(),
                config.numKeyValueHeads(), config.headDim(), experts.present() ? experts.ffn()
                : config.intermediateSize(), config.vocabSize(), (float) config.rmsNormEps(), rope, contextLength,
                (float) config.attentionScale(), sliding, experts.count(), (float) config.attnLogitSoftcapping());
    }

    /** A tile tensor's logical {@code [rows, cols]}: as the file records it, else from config.json. */
    public Optional<int[]> tileShape(String name) {
        return weights.tiled(name) ? weights.recordedShape(name).or(() -> new ConfigShapes(config).of(name))
                : Optional.empty();
    }

    /** The kind of a tile tensor's tiles, told by their size once its shape is known. */
    public Optional<Matrix.Layout> tileLayout(String name) {
        return tileShape(name).flatMap(shape -> weights.tensor(name)
                .flatMap(t -> Q4nx.layoutOf(t.data().remaining(), shape[0], shape[1])));
    }

    /** The storage formats of the weights and how many tensors use each, e.g. {@code {F32=11, Q8=36}}. */
    public Map<String, Integer> weightFormats() {
        Map<String, Integer> formats = new TreeMap<>();
        for (var t : weights.tensors()) {
            String format = t.dtype().name();
            if (weights.tiled(t.name())) {
                format = tileLayout(t.name()).map(Enum::name).orElse("tiles");
            }
            formats.merge(tileName(format), 1, Integer::sum);
        }
        return formats;
    }

    private static String tileName(String layout) {
        return switch (layout) {
            case "TILES_Q8" -> "q8";
            case "TILES_Q4_1" -> "q4_1";
            case "TILES_Q4_K" -> "Q4_K";
            default -> layout.toLowerCase(Locale.ROOT);
        };
    }

    /** One line describing the model, e.g. {@code llama: 5 layers, hidden 64, 8 heads (4 KV), ffn 172, vocab 512}. */
    public String describe() {
        return config.modelType() + ": " + config.numHiddenLayers() + " layers, hidden " + config.hiddenSize() + ", "
                + config.numAttentionHeads() + " heads (" + config.numKeyValueHeads() + " KV), ffn "
                + (config.experts().present() ? config.experts().count() + " experts of " + config.experts().ffn()
                + " (" + config.experts().perToken() + " per token)" : config.intermediateSize()) + ", vocab "
                + config.vocabSize() + ", weights " + weightFormats()
                + (derivations.isEmpty() ? "" : "; derived: " + String.join("; ", derivations));
    }
}
