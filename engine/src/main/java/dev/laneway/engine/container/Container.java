package dev.laneway.engine.container;

import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.plan.Plan;
import dev.laneway.engine.plan.PlanJson;
import dev.laneway.engine.q4nx.Q4nx;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Laneway container directory (docs/container.md): {@code model.q4nx}, {@code config.json}, {@code tokenizer.json} (with
 * an optional {@code tokenizer_config.json}), {@code plan.json}, and optionally {@code npu/}. Opening reads the
 * config, the plan and the weight file's header, and maps the weights; nothing is copied.
 */
public final class Container {
    public static final String CONFIG = "config.json";
    public static final String TOKENIZER = "tokenizer.json";
    public static final String TOKENIZER_CONFIG = "tokenizer_config.json";
    public static final String PLAN = "plan.json";
    public static final String WEIGHTS = Q4nx.FILE_NAME;
    /** The lane directory of the fast lane. */
    public static final String LANE_DIR = "npu";

    private final Path dir;
    private final ModelConfig config;
    private final Plan plan;
    private final Q4nxFile weights;

    private Container(Path dir, ModelConfig config, Plan plan, Q4nxFile weights) {
        this.dir = dir;
        this.config = config;
        this.plan = plan;
        this.weights = weights;
    }

    /**
     * Opens a container directory.
     *
     * @throws FormatException naming the file and what is wrong when a part is missing or invalid
     */
    public static Container open(Path dir) throws IOException {
        for (String required : new String[]{WEIGHTS, CONFIG, TOKENIZER, PLAN}) {
            if (!Files.isRegularFile(dir.resolve(required))) {
                throw new FormatException(dir, "not a container: " + required + " is missing");
            }
        }
        ModelConfig config = ConfigJson.read(dir.resolve(CONFIG));
        Plan plan = PlanJson.read(dir.resolve(PLAN));
        Q4nxFile weights = Q4nxFile.open(dir.resolve(WEIGHTS));
        return new Container(dir, config, plan, weights);
    }

    /** Whether the directory holds the files of a container (without reading them). */
    public static boolean looksLikeOne(Path dir) {
        return Files.isRegularFile(dir.resolve(WEIGHTS)) && Files.isRegularFile(dir.resolve(CONFIG));
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
            rope = config.ropeFrequencies(weights.tensor(RopeFrequencies.FACTORS_TENSOR).map(Dequant::toFloat));
        } catch (IllegalArgumentException e) {
            throw new FormatException(weights.path(), e.getMessage());
        }
        return new Dims(config.hiddenSize(), config.numHiddenLayers(), config.numAttentionHeads(),
                config.numKeyValueHeads(), config.headDim(), config.intermediateSize(), config.vocabSize(),
                (float) config.rmsNormEps(), rope, contextLength);
    }

    /** The storage formats of the weights and how many tensors use each, e.g. {@code {F32=11, Q8=36}}. */
    public Map<String, Integer> weightFormats() {
        Map<String, Integer> formats = new TreeMap<>();
        for (var t : weights.tensors()) {
            String format = t.dtype().name();
            if (weights.tiled(t.name())) {
                try {
                    format = weights.matrix(t.name()).layout().name();
                } catch (FormatException e) {
                    format = "tiles";
                }
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
                + config.intermediateSize() + ", vocab " + config.vocabSize() + ", weights " + weightFormats();
    }
}
