package dev.laneway.engine.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.kernels.Rope;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Reads and writes {@code plan.json}. Errors name the file and the JSON path of the field at fault. */
public final class PlanJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private PlanJson() {
    }

    public static Plan read(Path file) throws IOException {
        return new Reader(file).plan(tree(file));
    }

    /**
     * The plan in {@code file} if the file is a Laneway plan (its {@code format} says so), else empty: another
     * engine's {@code plan.json}, which the caller replaces. A Laneway plan that is invalid fails as {@link #read}.
     */
    public static Optional<Plan> readIfLaneways(Path file) throws IOException {
        JsonNode root = tree(file);
        JsonNode format = root.get("format");
        if (!root.isObject() || format == null || !Plan.FORMAT.equals(format.asText())) {
            return Optional.empty();
        }
        return Optional.of(new Reader(file).plan(root));
    }

    /** The file's JSON; the parser reads the bytes, so text that is not UTF-8 is reported as invalid JSON too. */
    private static JsonNode tree(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        JsonNode root;
        try {
            root = JSON.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new FormatException(file, "not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            // the bytes decoded as another encoding of JSON (UTF-16 or UTF-32, as the parser detects them) and failed
            throw new FormatException(file, "not valid JSON: " + e.getMessage());
        }
        if (root == null || root.isMissingNode()) {
            throw new FormatException(file, "empty, expected a JSON object");
        }
        return root;
    }

    public static void write(Plan plan, Path file) throws IOException {
        Files.writeString(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(toJson(plan)) + "\n");
    }

    static ObjectNode toJson(Plan plan) {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", Plan.FORMAT);
        root.put("version", Plan.VERSION);
        ObjectNode buffers = root.putObject("buffers");
        plan.buffers().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> buffers.put(e.getKey(), e.getValue().jsonName()));
        ops(root.putArray("prologue"), plan.prologue());
        ops(root.putArray("layer"), plan.layer());
        ops(root.putArray("epilogue"), plan.epilogue());
        root.put("logits", plan.logits());
        return root;
    }

    private static void ops(ArrayNode array, List<Op> ops) {
        for (Op op : ops) {
            ObjectNode o = array.addObject();
            o.put("op", op.kind());
            if (op instanceof Op.Embed e) {
                o.put("weight", e.weight()).put("out", e.out());
            } else if (op instanceof Op.RmsNorm n) {
                o.put("in", n.in()).put("weight", n.weight()).put("out", n.out());
                if (n.perHead()) {
                    o.put("per_head", true);
                }
            } else if (op instanceof Op.MatMul m) {
                o.put("weight", m.weight()).put("in", m.in()).put("out", m.out());
                if (m.lastOnly()) {
                    o.put("last_only", true);
                }
            } else if (op instanceof Op.AddBias b) {
                o.put("bias", b.bias()).put("out", b.out());
            } else if (op instanceof Op.RotaryEmbedding r) {
                o.put("q", r.q()).put("k", r.k()).put("style", r.style().name().toLowerCase(Locale.ROOT));
            } else if (op instanceof Op.Attention a) {
                o.put("q", a.q()).put("k", a.k()).put("v", a.v()).put("out", a.out());
            } else if (op instanceof Op.SiluMul s) {
                o.put("gate", s.gate()).put("up", s.up());
            } else if (op instanceof Op.Add a) {
                o.put("to", a.to()).put("from", a.from());
            } else if (op instanceof Op.GeluMul g) {
                o.put("gate", g.gate()).put("up", g.up());
            } else if (op instanceof Op.Scale c) {
                o.put("buffer", c.buffer()).put("factor", c.factor());
            } else if (op instanceof Op.SoftCap c) {
                o.put("buffer", c.buffer()).put("cap", c.cap());
            } else if (op instanceof Op.Moe m) {
                o.put("in", m.in()).put("out", m.out()).put("router", m.router()).put("gate", m.gate())
                        .put("up", m.up()).put("down", m.down()).put("experts", m.experts())
                        .put("per_token", m.perToken()).put("normalize", m.normalize());
            }
        }
    }

    /** Parses one file, naming it and the field in every error. */
    private record Reader(Path file) {

        Plan plan(JsonNode root) throws FormatException {
            if (!root.isObject()) {
                throw error("$", "expected a JSON object");
            }
            String format = text(root, "format", "$");
            if (!Plan.FORMAT.equals(format)) {
                throw error("$.format", "expected \"" + Plan.FORMAT + "\", found \"" + format + "\"");
            }
            JsonNode version = root.get("version");
            if (version == null || !version.canConvertToInt() || version.intValue() != Plan.VERSION) {
                throw error("$.version", "unsupported plan version " + version + ", expected " + Plan.VERSION);
            }
            Map<String, Plan.Dim> buffers = buffers(object(root, "buffers", "$"));
            List<Op> prologue = ops(root, "prologue", buffers);
            List<Op> layer = ops(root, "layer", buffers);
            List<Op> epilogue = ops(root, "epilogue", buffers);
            String logits = text(root, "logits", "$");
            if (!buffers.containsKey(logits)) {
                throw error("$.logits", "names no declared buffer: " + logits);
            }
            return new Plan(buffers, prologue, layer, epilogue, logits);
        }

        private Map<String, Plan.Dim> buffers(JsonNode node) throws FormatException {
            Map<String, Plan.Dim> buffers = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                String where = "$.buffers." + e.getKey();
                if (!e.getValue().isTextual()) {
                    throw error(where, "expected a dimension name");
                }
                try {
                    buffers.put(e.getKey(), Plan.Dim.valueOf(e.getValue().asText().toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException ex) {
                    throw error(where, "unknown dimension \"" + e.getValue().asText()
                            + "\" (known: hidden, q, kv, ffn, vocab)");
                }
            }
            return buffers;
        }

        private List<Op> ops(JsonNode root, String section, Map<String, Plan.Dim> buffers) throws FormatException {
            JsonNode array = root.get(section);
            if (array == null || !array.isArray()) {
                throw error("$." + section, "expected an array of ops");
            }
            List<Op> ops = new ArrayList<>();
            for (int i = 0; i < array.size(); i++) {
                String where = "$." + section + "[" + i + "]";
                Op op = op(array.get(i), where);
                for (String buffer : op.buffers()) {
                    if (!buffers.containsKey(buffer)) {
                        throw error(where, "names no declared buffer: " + buffer);
                    }
                }
                ops.add(op);
            }
            return ops;
        }

        private Op op(JsonNode node, String where) throws FormatException {
            if (!node.isObject()) {
                throw error(where, "expected an op object");
            }
            String kind = text(node, "op", where);
            return switch (kind) {
                case "embed" -> new Op.Embed(text(node, "weight", where), text(node, "out", where));
                case "rms_norm" -> new Op.RmsNorm(text(node, "in", where), text(node, "weight", where),
                        text(node, "out", where), node.path("per_head").asBoolean(false));
                case "matmul" -> new Op.MatMul(text(node, "weight", where), text(node, "in", where),
                        text(node, "out", where), node.path("last_only").asBoolean(false));
                case "add_bias" -> new Op.AddBias(text(node, "bias", where), text(node, "out", where));
                case "rope" -> new Op.RotaryEmbedding(text(node, "q", where), text(node, "k", where),
                        ropeStyle(text(node, "style", where), where));
                case "attention" -> new Op.Attention(text(node, "q", where), text(node, "k", where),
                        text(node, "v", where), text(node, "out", where));
                case "silu_mul" -> new Op.SiluMul(text(node, "gate", where), text(node, "up", where));
                case "add" -> new Op.Add(text(node, "to", where), text(node, "from", where));
                case "gelu_mul" -> new Op.GeluMul(text(node, "gate", where), text(node, "up", where));
                case "scale" -> new Op.Scale(text(node, "buffer", where), number(node, "factor", where));
                case "softcap" -> {
                    double cap = number(node, "cap", where);
                    if (!(cap > 0)) {
                        throw error(where + ".cap", "must be positive, got " + cap);
                    }
                    yield new Op.SoftCap(text(node, "buffer", where), cap);
                }
                case "moe" -> {
                    int experts = (int) number(node, "experts", where);
                    int perToken = (int) number(node, "per_token", where);
                    if (experts < 1 || perToken < 1 || perToken > experts) {
                        throw error(where, experts + " experts cannot choose " + perToken + " per token");
                    }
                    yield new Op.Moe(text(node, "in", where), text(node, "out", where), text(node, "router", where),
                            text(node, "gate", where), text(node, "up", where), text(node, "down", where), experts,
                            perToken, node.path("normalize").asBoolean(false));
                }
                default -> throw error(where + ".op", "unknown op \"" + kind + "\" (known: embed, rms_norm, matmul, "
                        + "add_bias, rope, attention, silu_mul, add, gelu_mul, scale, softcap, moe)");
            };
        }

        private Rope.Style ropeStyle(String style, String where) throws FormatException {
            return switch (style) {
                case "interleaved" -> Rope.Style.INTERLEAVED;
                case "halves" -> Rope.Style.HALVES;
                default -> throw error(where + ".style", "unknown rope style \"" + style
                        + "\" (known: interleaved, halves)");
            };
        }

        private JsonNode object(JsonNode node, String field, String where) throws FormatException {
            JsonNode v = node.get(field);
            if (v == null || !v.isObject()) {
                throw error(where + "." + field, v == null ? "missing" : "expected an object");
            }
            return v;
        }

        private String text(JsonNode node, String field, String where) throws FormatException {
            JsonNode v = node.get(field);
            if (v == null) {
                throw error(where + "." + field, "missing");
            }
            if (!v.isTextual() || v.asText().isEmpty()) {
                throw error(where + "." + field, "expected a non-empty string");
            }
            return v.asText();
        }

        private double number(JsonNode node, String field, String where) throws FormatException {
            JsonNode v = node.get(field);
            if (v == null) {
                throw error(where + "." + field, "missing");
            }
            if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
                throw error(where + "." + field, "expected a finite number");
            }
            return v.doubleValue();
        }

        private FormatException error(String field, String message) {
            return new FormatException(file, field + ": " + message);
        }
    }
}
