package dev.laneway.engine.tools;

import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.ModelInspector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/** {@code ./laneway inspect} for containers, {@code model.q4nx} files and GGUF files. */
public final class EngineInspector implements ModelInspector {
    private static final int MAX_VALUE_CHARS = 120;

    @Override
    public boolean reads(Path path) {
        return Container.looksLikeOne(path) || path.getFileName().toString().equals(Container.WEIGHTS)
                || path.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf");
    }

    @Override
    public String inspect(Path path) throws IOException {
        StringBuilder out = new StringBuilder();
        if (Files.isDirectory(path) || path.getFileName().toString().equals(Container.WEIGHTS)) {
            container(Files.isDirectory(path) ? path : path.getParent(), out);
        } else {
            gguf(GgufFile.open(path), out);
        }
        return out.toString();
    }

    private static void container(Path dir, StringBuilder out) throws IOException {
        out.append("container: ").append(dir).append('\n');
        Container c = Container.open(dir);
        out.append("model: ").append(c.describe()).append('\n');
        out.append("\nconfig.json:\n").append(ConfigJson.toJson(c.config()).indent(2));
        out.append("\nplan: ").append(c.plan().prologue().size()).append(" prologue ops, ")
                .append(c.plan().layer().size()).append(" ops per layer, ").append(c.plan().epilogue().size())
                .append(" epilogue ops\n");
        if (!c.derivations().isEmpty()) {
            out.append("\nderived:\n");
            c.derivations().forEach(d -> out.append("  ").append(d).append('\n'));
        }
        tensors(c, out);
        tokenizer(TokenizerLoader.load(dir), out);
        Path lane = dir.resolve(Container.LANE_DIR);
        out.append("\nlane: ").append(Files.isDirectory(lane) ? lane : "none").append('\n');
    }

    private static void tensors(Container c, StringBuilder out) {
        Q4nxFile weights = c.weights();
        out.append("\ntensors (").append(weights.tensors().size()).append("):\n");
        for (Tensor t : weights.tensors()) {
            String layout = t.dtype().name();
            if (weights.tiled(t.name())) {
                var shape = c.tileShape(t.name());
                layout = c.tileLayout(t.name()).map(l -> l + " " + shape.get()[0] + "x" + shape.get()[1])
                        .orElse("tiles of no known size");
            }
            out.append(String.format("  %-48s %-10s %-16s %s%n", t.name(), t.dtype(), Arrays.toString(t.shape()),
                    layout));
        }
    }

    private static void gguf(GgufFile g, StringBuilder out) throws IOException {
        out.append("gguf: ").append(g.path()).append(" (version ").append(g.version()).append(")\n");
        out.append("\nmetadata (").append(g.metadata().size()).append("):\n");
        for (Map.Entry<String, Object> e : g.metadata().entrySet()) {
            out.append("  ").append(e.getKey()).append(" = ").append(value(e.getValue())).append('\n');
        }
        out.append("\ntensors (").append(g.tensors().size()).append("):\n");
        for (Tensor t : g.tensors()) {
            out.append(String.format("  %-32s %-6s %s%n", t.name(), t.dtype(), Arrays.toString(t.shape())));
        }
        if (g.array("tokenizer.ggml.tokens").isPresent()) {
            tokenizer(TokenizerLoader.fromGguf(g), out);
        }
    }

    private static void tokenizer(TextTokenizer t, StringBuilder out) {
        try (t) {
            out.append("\ntokenizer: ").append(t.vocabSize()).append(" tokens");
            t.bosId().ifPresent(id -> out.append(", bos ").append(id).append(" ").append(t.tokenText(id)));
            t.eosId().ifPresent(id -> out.append(", eos ").append(id).append(" ").append(t.tokenText(id)));
            out.append(", adds bos: ").append(t.addsBos());
            out.append(", chat template: ").append(t.chatTemplateSource().isPresent() ? "yes" : "no (default)")
                    .append('\n');
        }
    }

    private static String value(Object v) {
        String s;
        if (v instanceof GgufArray a) {
            s = a.elementType().toLowerCase(java.util.Locale.ROOT) + "[" + a.length() + "]";
        } else {
            s = String.valueOf(v);
        }
        s = s.replace("\n", "\\n");
        return s.length() > MAX_VALUE_CHARS ? s.substring(0, MAX_VALUE_CHARS) + "..." : s;
    }
}
