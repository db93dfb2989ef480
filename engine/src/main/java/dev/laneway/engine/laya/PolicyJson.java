package dev.laneway.engine.laya;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.JsonObjects;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@code route-policy.json}:
 * <pre>
 * {"min_confidence": 0.16, "default": "cpu",
 *  "classes": {"code": {"device": "npu", "why": "..."}, "prose": {...}, "short": {...}, "long_doc": {...}}}
 * </pre>
 * {@code min_confidence} (a number from 0 to 1) and {@code default} (a device name) are required; {@code classes}
 * may leave classes out (they go to the default); a row needs a string {@code device} and may have a string
 * {@code why}. Anything else (an unknown class or field, a wrong type, a duplicate key) is an error naming the field.
 */
public final class PolicyJson {
    private static final Set<String> TOP_FIELDS = Set.of("min_confidence", "default", "classes");
    private static final Set<String> ROW_FIELDS = Set.of("device", "why");

    private PolicyJson() {
    }

    /** Parses a policy; {@code file} names it in messages. */
    public static RoutePolicy parse(Path file, byte[] json) throws FormatException {
        JsonNode root = JsonObjects.read(file, json, "a JSON object with min_confidence, default and classes");
        onlyKnownFields(file, root, TOP_FIELDS, "");
        double minConfidence = minConfidence(file, root.get("min_confidence"));
        String defaultDevice = device(file, root.get("default"), "default");
        Map<RequestClass, RoutePolicy.ClassRoute> classes = new EnumMap<>(RequestClass.class);
        JsonNode rows = root.get("classes");
        if (rows != null) {
            if (!rows.isObject()) {
                throw new FormatException(file, "classes: expected an object of class rows, was " + type(rows));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = rows.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> row = it.next();
                RequestClass c = RequestClass.named(row.getKey()).orElseThrow(() -> new FormatException(file,
                        "classes." + row.getKey() + ": unknown class (known: " + RequestClass.names() + ")"));
                classes.put(c, row(file, row.getValue(), "classes." + row.getKey()));
            }
        }
        return new RoutePolicy(minConfidence, defaultDevice, classes);
    }

    private static RoutePolicy.ClassRoute row(Path file, JsonNode row, String field) throws FormatException {
        if (!row.isObject()) {
            throw new FormatException(file, field + ": expected an object with a device, was " + type(row));
        }
        onlyKnownFields(file, row, ROW_FIELDS, field + ".");
        String device = device(file, row.get("device"), field + ".device");
        JsonNode why = row.get("why");
        if (why != null && !why.isTextual()) {
            throw new FormatException(file, field + ".why: expected a string, was " + type(why));
        }
        return new RoutePolicy.ClassRoute(device, why == null ? "" : why.asText());
    }

    private static double minConfidence(Path file, JsonNode node) throws FormatException {
        if (node == null) {
            throw new FormatException(file, "min_confidence: missing (a number from 0 to 1)");
        }
        if (!node.isNumber() || !(node.asDouble() >= 0 && node.asDouble() <= 1)) {
            throw new FormatException(file, "min_confidence: expected a number from 0 to 1, was " + node);
        }
        return node.asDouble();
    }

    private static String device(Path file, JsonNode node, String field) throws FormatException {
        if (node == null) {
            throw new FormatException(file, field + ": missing (a device name such as cpu)");
        }
        if (!node.isTextual() || node.asText().isBlank()) {
            throw new FormatException(file, field + ": expected a device name (a non-empty string), was "
                    + (node.isTextual() ? "\"" + node.asText() + "\"" : type(node)));
        }
        return node.asText().strip();
    }

    private static void onlyKnownFields(Path file, JsonNode object, Set<String> known, String prefix)
            throws FormatException {
        for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!known.contains(name)) {
                throw new FormatException(file, prefix + name + ": unknown field (known: "
                        + String.join(", ", known.stream().sorted().toList()) + ")");
            }
        }
    }

    private static String type(JsonNode node) {
        return node.isNull() ? "null" : node.getNodeType().name().toLowerCase(java.util.Locale.ROOT)
                + (node.isValueNode() ? " " + node : "");
    }
}
