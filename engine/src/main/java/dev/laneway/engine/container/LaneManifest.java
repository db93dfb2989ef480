package dev.laneway.engine.container;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.JsonObjects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A lane manifest ({@code lane.json} in a kernels directory): the kernel set, the model shape its kernels were built
 * for, the device kind they run on, and their files.
 *
 * @param kernelSet the kernel set's id
 * @param device    the device kind, e.g. {@code cpu} or {@code npu}
 * @param shape     config.json field → value: hidden_size, num_hidden_layers, num_attention_heads,
 *                  num_key_value_heads, head_dim, intermediate_size, vocab_size
 * @param kernels   kernel files, relative to the manifest's directory (empty for the host kernel set)
 */
public record LaneManifest(String kernelSet, String device, Map<String, Integer> shape, List<String> kernels) {
    /** The manifest's file name. */
    public static final String FILE = "lane.json";
    /** The kernel set of the host: the native fused layer kernels and the output head. */
    public static final String HOST_KERNEL_SET = "laneway-host-fused-v1";
    /** The shape fields a manifest records, in order. */
    public static final List<String> SHAPE_FIELDS = List.of("hidden_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size");
    private static final ObjectMapper JSON = new ObjectMapper();

    public LaneManifest {
        shape = Map.copyOf(shape);
        kernels = List.copyOf(kernels);
    }

    /** The shape fields of a model config. */
    public static Map<String, Integer> shapeOf(ModelConfig c) {
        Map<String, Integer> shape = new LinkedHashMap<>();
        shape.put("hidden_size", c.hiddenSize());
        shape.put("num_hidden_layers", c.numHiddenLayers());
        shape.put("num_attention_heads", c.numAttentionHeads());
        shape.put("num_key_value_heads", c.numKeyValueHeads());
        shape.put("head_dim", c.headDim());
        shape.put("intermediate_size", c.intermediateSize());
        shape.put("vocab_size", c.vocabSize());
        return shape;
    }

    /** The host kernel set's manifest for a model. */
    public static LaneManifest host(ModelConfig c) {
        return new LaneManifest(HOST_KERNEL_SET, "cpu", shapeOf(c), List.of());
    }

    /** The first shape field in which this manifest and the config differ, described; empty when they match. */
    public java.util.Optional<String> mismatch(ModelConfig c) {
        Map<String, Integer> actual = shapeOf(c);
        for (String field : SHAPE_FIELDS) {
            if (!actual.get(field).equals(shape.get(field))) {
                return java.util.Optional.of(field + " is " + shape.get(field) + " in the lane manifest but "
                        + actual.get(field) + " in config.json");
            }
        }
        return java.util.Optional.empty();
    }

    public void write(Path dir) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("kernel_set", kernelSet);
        root.put("device", device);
        ObjectNode s = root.putObject("shape");
        SHAPE_FIELDS.forEach(f -> s.put(f, shape.get(f)));
        kernels.forEach(root.putArray("kernels")::add);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
    }

    /**
     * Reads {@code dir/lane.json}.
     *
     * @throws FormatException naming the file and the field that is missing or wrong
     */
    public static LaneManifest read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        JsonNode root = JsonObjects.read(file, Files.readAllBytes(file),
                "a JSON object with kernel_set, device, shape and kernels");
        String kernelSet = text(root, "kernel_set", file);
        String device = text(root, "device", file);
        JsonNode shapeNode = root.get("shape");
        if (shapeNode == null || !shapeNode.isObject()) {
            throw new FormatException(file, "shape: missing or not an object");
        }
        Map<String, Integer> shape = new LinkedHashMap<>();
        for (String f : SHAPE_FIELDS) {
            JsonNode v = shapeNode.get(f);
            if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
                throw new FormatException(file, "shape." + f + ": missing or not an integer");
            }
            shape.put(f, v.intValue());
        }
        List<String> kernels = new ArrayList<>();
        JsonNode k = root.get("kernels");
        if (k != null) {
            if (!k.isArray()) {
                throw new FormatException(file, "kernels: expected an array of file names");
            }
            for (int i = 0; i < k.size(); i++) {
                kernels.add(kernelFile(file, k.get(i), "kernels[" + i + "]"));
            }
        }
        return new LaneManifest(kernelSet, device, shape, kernels);
    }

    /** A kernel file's name: a path inside the manifest's directory. */
    private static String kernelFile(Path file, JsonNode name, String field) throws FormatException {
        String expected = "expected the name of a file in the manifest's directory, was " + name;
        if (!name.isTextual() || name.textValue().isBlank()) {
            throw new FormatException(file, field + ": " + expected);
        }
        Path path;
        try {
            path = Path.of(name.textValue());
        } catch (InvalidPathException e) {
            throw new FormatException(file, field + ": " + expected);
        }
        if (path.isAbsolute() || path.normalize().startsWith("..") || path.normalize().toString().isEmpty()) {
            throw new FormatException(file, field + ": " + expected);
        }
        return name.textValue();
    }

    private static String text(JsonNode root, String field, Path file) throws FormatException {
        JsonNode v = root.get(field);
        if (v == null || !v.isTextual()) {
            throw new FormatException(file, field + ": missing or not a string");
        }
        return v.asText();
    }
}
