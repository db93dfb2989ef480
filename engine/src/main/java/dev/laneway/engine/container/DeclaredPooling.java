package dev.laneway.engine.container;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.spi.Pooling;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How a model says its embeddings are pooled: a GGUF file's {@code <arch>.pooling_type} (llama.cpp's numbers: 0 none,
 * 1 mean, 2 cls, 3 last, 4 rank), or a checkpoint's sentence-transformers file {@code 1_Pooling/config.json} (its
 * {@code pooling_mode_*} flags), which is also how a container keeps it. A reranker's container keeps no such file:
 * its ranking head is what declares it ({@code score.weight}). A pooling Laneway does not implement is refused by
 * name.
 */
public final class DeclaredPooling {
    /** Where a container or a checkpoint declares its pooling. */
    public static final String FILE = "1_Pooling/config.json";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Pooling> MODES = Map.of("pooling_mode_mean_tokens", Pooling.MEAN,
            "pooling_mode_cls_token", Pooling.CLS, "pooling_mode_lasttoken", Pooling.LAST);

    private DeclaredPooling() {
    }

    /** The pooling a GGUF file's metadata declares; empty when it declares none. */
    public static Optional<Pooling> of(GgufFile gguf, String architecture) throws FormatException {
        String key = architecture + ".pooling_type";
        Optional<Object> value = gguf.get(key);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        if (!(value.get() instanceof Number n) || n.longValue() != n.doubleValue()) {
            throw new FormatException(gguf.path(), key + " must be an integer, was " + value.get());
        }
        return switch ((int) n.longValue()) {
            case 0 -> Optional.empty();
            case 1 -> Optional.of(Pooling.MEAN);
            case 2 -> Optional.of(Pooling.CLS);
            case 3 -> Optional.of(Pooling.LAST);
            case 4 -> Optional.of(Pooling.RANK);
            default -> throw new FormatException(gguf.path(), key + " " + n + " is not a pooling llama.cpp defines"
                    + " (0 none, 1 mean, 2 cls, 3 last, 4 rank)");
        };
    }

    /** The pooling {@code dir}'s {@value #FILE} declares; empty when there is no such file. */
    public static Optional<Pooling> read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file));
        } catch (JsonProcessingException e) {
            throw new FormatException(file, "is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new FormatException(file, "must be a JSON object");
        }
        Pooling chosen = null;
        for (var field : (Iterable<Map.Entry<String, JsonNode>>) root::fields) {
            if (!field.getKey().startsWith("pooling_mode_") || !field.getValue().asBoolean(false)) {
                continue;
            }
            Pooling p = MODES.get(field.getKey());
            if (p == null) {
                throw new FormatException(file, field.getKey() + " is not supported (mean, cls and last are)");
            }
            if (chosen != null) {
                throw new FormatException(file, "declares more than one pooling mode");
            }
            chosen = p;
        }
        if (chosen == null) {
            throw new FormatException(file, "declares no pooling mode");
        }
        return Optional.of(chosen);
    }

    /**
     * Writes {@code pooling} as {@code dir}'s {@value #FILE}, for a model of {@code hidden} dimensions; nothing for
     * {@code rank}, which sentence-transformers has no flag for and the ranking head declares.
     */
    public static void write(Pooling pooling, int hidden, Path dir) throws IOException {
        if (pooling == Pooling.RANK) {
            return;
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("word_embedding_dimension", hidden);
        config.put("pooling_mode_cls_token", pooling == Pooling.CLS);
        config.put("pooling_mode_mean_tokens", pooling == Pooling.MEAN);
        config.put("pooling_mode_max_tokens", false);
        config.put("pooling_mode_mean_sqrt_len_tokens", false);
        config.put("pooling_mode_lasttoken", pooling == Pooling.LAST);
        Path file = dir.resolve(FILE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(config) + "\n");
    }
}
