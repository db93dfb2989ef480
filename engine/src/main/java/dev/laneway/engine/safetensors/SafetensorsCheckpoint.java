package dev.laneway.engine.safetensors;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The weights of a Hugging Face checkpoint directory: {@code model.safetensors}, or the shards that
 * {@code model.safetensors.index.json} lists in its {@code weight_map}. Tensors of every shard, memory-mapped.
 */
public final class SafetensorsCheckpoint {
    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";

    private final Path dir;
    private final List<SafetensorsFile> files;
    private final Map<String, Tensor> tensors;

    private SafetensorsCheckpoint(Path dir, List<SafetensorsFile> files, Map<String, Tensor> tensors) {
        this.dir = dir;
        this.files = List.copyOf(files);
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    public static SafetensorsCheckpoint open(Path dir) throws IOException {
        List<Path> paths = new ArrayList<>();
        Path single = dir.resolve(SINGLE_FILE);
        Path index = dir.resolve(INDEX_FILE);
        if (Files.exists(single)) {
            paths.add(single);
        } else if (Files.exists(index)) {
            paths.addAll(shards(index));
        } else {
            throw new FormatException(dir, "no " + SINGLE_FILE + " or " + INDEX_FILE + " in the checkpoint directory");
        }
        List<SafetensorsFile> files = new ArrayList<>();
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Path p : paths) {
            SafetensorsFile f = SafetensorsFile.open(p);
            files.add(f);
            for (Tensor t : f.tensors()) {
                if (tensors.put(t.name(), t) != null) {
                    throw new FormatException(p, "tensor " + t.name() + " is also in an earlier shard");
                }
            }
        }
        return new SafetensorsCheckpoint(dir, files, tensors);
    }

    /** The distinct shard files of an index's weight_map, in first-mention order. */
    private static List<Path> shards(Path index) throws IOException {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(index));
        } catch (JsonProcessingException e) {
            throw new FormatException(index, "not valid JSON: " + e.getOriginalMessage());
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new FormatException(index, "missing weight_map object");
        }
        List<Path> shards = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : map.properties()) {
            String name = e.getValue().asText("");
            Path shard = index.resolveSibling(name).normalize();
            if (!e.getValue().isTextual() || name.isEmpty() || !shard.getParent().equals(index.getParent().normalize())) {
                throw new FormatException(index, "weight_map entry " + e.getKey() + " is " + e.getValue()
                        + ", expected a shard file name in the same directory");
            }
            if (!shards.contains(shard)) {
                shards.add(shard);
            }
        }
        return shards;
    }

    public Path dir() {
        return dir;
    }

    /** The files read, one or several shards. */
    public List<SafetensorsFile> files() {
        return files;
    }

    /** Every tensor of every shard, by name, in file order. */
    public Map<String, Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> tensor(String name) {
        return Optional.ofNullable(tensors.get(name));
    }
}
