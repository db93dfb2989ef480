package dev.laneway.engine.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON Schema as a GBNF grammar, so that constrained decoding yields JSON that parses and conforms. The subset:
 * {@code type} (one or a list), {@code properties}, {@code required}, {@code additionalProperties} ({@code false};
 * or, for an object without {@code properties}, {@code true} or a schema for every value), {@code enum},
 * {@code const}, {@code items} with {@code minItems}/{@code maxItems}, tuples ({@code prefixItems}, or {@code items}
 * as a list: exactly those items, in order), {@code anyOf}, {@code $ref} into
 * {@code $defs}/{@code definitions}, {@code minLength}/{@code maxLength}, and the string formats {@code date},
 * {@code time}, {@code date-time} and {@code uuid}. Properties come in the order the schema lists them (required and
 * optional alike); an object schema without {@code additionalProperties} allows no other properties. Annotations
 * ({@code title}, {@code description}, ...) do not constrain; any other keyword is refused by name, with where it is.
 *
 * <p>Numbers are bounded so that output stays finite: at most 16 integer and 16 fraction digits, and an exponent of
 * at most 3 digits; whitespace between tokens is at most one space or a line end and 20 blanks.
 */
public final class JsonSchemaGrammar {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default", "examples", "$schema",
            "$id", "$comment", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "strict", "name");
    private static final int MAX_ITEMS = 1000;
    /** The characters of a schema path a rule name keeps. */
    private static final int NAME_PATH = 48;

    private static final Map<String, String> PRIMITIVES = new LinkedHashMap<>();

    static {
        PRIMITIVES.put("space", "| \" \" | \"\\n\" [ \\t]{0,20}");
        PRIMITIVES.put("char", "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})");
        PRIMITIVES.put("string", "\"\\\"\" char* \"\\\"\" space");
        PRIMITIVES.put("integral", "\"0\" | [1-9] [0-9]{0,15}");
        PRIMITIVES.put("integer", "\"-\"? integral space");
        PRIMITIVES.put("number", "\"-\"? integral (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? space");
        PRIMITIVES.put("boolean", "(\"true\" | \"false\") space");
        PRIMITIVES.put("null", "\"null\" space");
        PRIMITIVES.put("value", "object | array | string | number | boolean | null");
        PRIMITIVES.put("object", "\"{\" space (string \":\" space value (\",\" space string \":\" space value)*)?"
                + " \"}\" space");
        PRIMITIVES.put("array", "\"[\" space (value (\",\" space value)*)? \"]\" space");
        PRIMITIVES.put("date", "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | [1-2] [0-9] | \"3\""
                + " [0-1])");
        PRIMITIVES.put("time", "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{3})?"
                + " (\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])");
        PRIMITIVES.put("date-string", "\"\\\"\" date \"\\\"\" space");
        PRIMITIVES.put("time-string", "\"\\\"\" time \"\\\"\" space");
        PRIMITIVES.put("date-time-string", "\"\\\"\" date \"T\" time \"\\\"\" space");
        PRIMITIVES.put("uuid-string", "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\""
                + " [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\" space");
    }

    private final JsonNode root;
    private final String field;
    /** What every rule name this schema adds begins with, so that the rules of several schemas never meet. */
    private final String prefix;
    private final Map<String, String> rules = new LinkedHashMap<>();
    private final Map<String, String> refRules = new HashMap<>();
    /** The next suffix to try for each rule name base, so that names are found without trying each taken one. */
    private final Map<String, Integer> suffixes = new HashMap<>();

    private JsonSchemaGrammar(JsonNode root, String field, String prefix) {
        this.root = root;
        this.field = field;
        this.prefix = prefix;
    }

    /**
     * The grammar of the JSON values {@code schema} allows.
     *
     * @param field the request field the schema came in, for errors (e.g. {@code response_format.json_schema.schema})
     * @throws InvalidRequestException against {@code field}, naming the keyword Laneway does not implement, or what
     *                                 is malformed
     */
    public static String of(JsonNode schema, String field) {
        StringBuilder out = new StringBuilder();
        new JsonSchemaGrammar(schema, field, "").writeAs("root", out);
        return withPrimitives(out);
    }

    /** The grammar of any JSON object ({@code response_format: json_object}). */
    public static String anyObject() {
        return withPrimitives(new StringBuilder("root ::= object\n"));
    }

    /**
     * GBNF whose schema rules are defined here: each the values its schema allows. The GBNF's own rules must not be
     * named as a JSON primitive ({@code string}, {@code value}, {@code space}, ...) nor begin with a schema rule's
     * name and a dash; a clash is refused as a rule defined twice.
     *
     * @throws InvalidRequestException against a schema rule's field, naming what it cannot honour
     */
    public static String withSchemaRules(String gbnf, List<OutputGrammar.SchemaRule> schemaRules) {
        StringBuilder out = new StringBuilder(gbnf).append('\n');
        for (OutputGrammar.SchemaRule rule : schemaRules) {
            JsonNode schema;
            try {
                schema = MAPPER.readTree(rule.schema());
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new InvalidRequestException(rule.field(), rule.field() + " is not JSON: "
                        + e.getOriginalMessage());
            }
            new JsonSchemaGrammar(schema, rule.field(), rule.name() + "-").writeAs(rule.name(), out);
        }
        return withPrimitives(out);
    }

    /** Writes this schema's grammar, its values the rule {@code name}. */
    private void writeAs(String name, StringBuilder out) {
        String body = visit(root, "");
        out.append(name).append(" ::= ").append(body).append('\n');
        rules.forEach((rule, definition) -> out.append(rule).append(" ::= ").append(definition).append('\n'));
    }

    private static String withPrimitives(StringBuilder out) {
        // Every primitive is written; a rule nothing refers to costs nothing.
        PRIMITIVES.forEach((name, body) -> out.append(name).append(" ::= ").append(body).append('\n'));
        return out.toString();
    }

    /** A grammar expression for the values {@code s} (at {@code path}) allows. */
    private String visit(JsonNode s, String path) {
        if (s.isBoolean()) {
            if (!s.booleanValue()) {
                throw refuse(path, "the schema false allows no value");
            }
            return "value";
        }
        if (!s.isObject()) {
            throw refuse(path, "a schema must be an object or a boolean");
        }
        for (String key : (Iterable<String>) s::fieldNames) {
            if (!ANNOTATIONS.contains(key) && !List.of("type", "properties", "required", "additionalProperties",
                    "enum", "const", "items", "prefixItems", "minItems", "maxItems", "anyOf", "$ref", "minLength",
                    "maxLength", "format").contains(key)) {
                throw refuse(path, "the JSON Schema keyword " + key + " is not supported");
            }
        }
        if (s.has("$ref")) {
            return ref(s.get("$ref").asText(), path);
        }
        if (s.has("const")) {
            return literal(s.get("const"));
        }
        if (s.has("enum")) {
            JsonNode values = s.get("enum");
            if (!values.isArray() || values.isEmpty()) {
                throw refuse(path, "enum must be a non-empty array");
            }
            List<String> alts = new ArrayList<>();
            for (JsonNode v : values) {
                alts.add(literal(v));
            }
            return "(" + String.join(" | ", alts) + ")";
        }
        if (s.has("anyOf")) {
            JsonNode options = s.get("anyOf");
            if (!options.isArray() || options.isEmpty()) {
                throw refuse(path, "anyOf must be a non-empty array");
            }
            List<String> alts = new ArrayList<>();
            for (int i = 0; i < options.size(); i++) {
                alts.add(visit(options.get(i), path + "/anyOf/" + i));
            }
            return "(" + String.join(" | ", alts) + ")";
        }
        JsonNode type = s.get("type");
        if (type == null) {
            if (s.has("properties") || s.has("additionalProperties")) {
                return object(s, path);
            }
            if (s.has("items") || s.has("prefixItems")) {
                return array(s, path);
            }
            return "value";
        }
        if (type.isArray()) {
            List<String> alts = new ArrayList<>();
            for (JsonNode t : type) {
                alts.add(typed(s, t.asText(), path));
            }
            if (alts.isEmpty()) {
                throw refuse(path, "type must name at least one type");
            }
            return "(" + String.join(" | ", alts) + ")";
        }
        return typed(s, type.asText(), path);
    }

    private String typed(JsonNode s, String type, String path) {
        return switch (type) {
            case "object" -> object(s, path);
            case "array" -> array(s, path);
            case "string" -> string(s, path);
            case "integer" -> "integer";
            case "number" -> "number";
            case "boolean" -> "boolean";
            case "null" -> "null";
            default -> throw refuse(path, "type " + type + " is not a JSON Schema type");
        };
    }

    private String string(JsonNode s, String path) {
        if (s.has("format")) {
            String format = s.get("format").asText();
            if (!List.of("date", "time", "date-time", "uuid").contains(format)) {
                throw refuse(path, "the string format " + format + " is not supported (date, time, date-time and"
                        + " uuid are)");
            }
            if (s.has("minLength") || s.has("maxLength")) {
                throw refuse(path, "minLength and maxLength together with a format are not supported");
            }
            return format + "-string";
        }
        if (!s.has("minLength") && !s.has("maxLength")) {
            return "string";
        }
        int min = count(s, "minLength", 0, path);
        int max = s.has("maxLength") ? count(s, "maxLength", 0, path) : -1;
        if (max >= 0 && max < min) {
            throw refuse(path, "maxLength is below minLength");
        }
        return "\"\\\"\" char{" + min + "," + (max < 0 ? "" : max) + "} \"\\\"\" space";
    }

    private String array(JsonNode s, String path) {
        if (s.has("prefixItems") || s.path("items").isArray()) {
            return tuple(s, path);
        }
        String item = s.has("items") ? visit(s.get("items"), path + "/items") : "value";
        int min = count(s, "minItems", 0, path);
        int max = s.has("maxItems") ? count(s, "maxItems", 0, path) : -1;
        if (max >= 0 && max < min) {
            throw refuse(path, "maxItems is below minItems");
        }
        String itemRule = rule(path + "-item", item);
        String list;
        if (max == 0) {
            list = "";
        } else {
            String more = "(\",\" space " + itemRule + ")";
            String rest = max < 0 ? more + "{" + Math.max(0, min - 1) + ",}"
                    : more + "{" + Math.max(0, min - 1) + "," + (max - 1) + "}";
            list = itemRule + " " + rest;
            if (min == 0) {
                list = "(" + list + ")?";
            }
        }
        return "\"[\" space " + list + " \"]\" space";
    }

    private String tuple(JsonNode s, String path) {
        String key = s.has("prefixItems") ? "prefixItems" : "items";
        JsonNode items = s.get(key);
        if (!items.isArray()) {
            throw refuse(path, key + " must be a list of schemas");
        }
        if (s.has("prefixItems") && s.has("items") || s.has("minItems") || s.has("maxItems")) {
            throw refuse(path, "a tuple (" + key + ") together with items, minItems or maxItems is not supported");
        }
        List<String> rules = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            rules.add(rule(path + "-" + i, visit(items.get(i), path + "/" + key + "/" + i)));
        }
        return "\"[\" space " + (rules.isEmpty() ? "" : String.join(" \",\" space ", rules) + " ") + "\"]\" space";
    }

    private String object(JsonNode s, String path) {
        JsonNode properties = s.get("properties");
        JsonNode additional = s.get("additionalProperties");
        if (properties == null || properties.isEmpty()) {
            if (additional != null && additional.isBoolean() && !additional.booleanValue()) {
                return "\"{\" space \"}\" space";
            }
            if (s.has("required") && !s.get("required").isEmpty()) {
                throw refuse(path, "required names properties the schema does not define");
            }
            String value = additional == null || additional.isBoolean() ? "value"
                    : visit(additional, path + "/additionalProperties");
            String pair = rule(path + "-pair", "string" + " \":\" space " + value);
            return "\"{\" space (" + pair + " (\",\" space " + pair + ")*)? \"}\" space";
        }
        if (!properties.isObject()) {
            throw refuse(path, "properties must be an object");
        }
        if (additional != null && !(additional.isBoolean() && !additional.booleanValue())) {
            throw refuse(path, "additionalProperties other than false alongside properties is not supported");
        }
        Set<String> required = new java.util.HashSet<>();
        if (s.has("required")) {
            for (JsonNode r : s.get("required")) {
                if (!properties.has(r.asText())) {
                    throw refuse(path, "required names " + r.asText() + ", which is not in properties");
                }
                required.add(r.asText());
            }
        }
        List<String> pairs = new ArrayList<>();
        List<Boolean> mandatory = new ArrayList<>();
        for (Map.Entry<String, JsonNode> p : (Iterable<Map.Entry<String, JsonNode>>) properties::fields) {
            String value = visit(p.getValue(), path + "/properties/" + p.getKey());
            pairs.add(rule(path + "-" + p.getKey(), literal(MAPPER.valueToTree(p.getKey())) + " \":\" space "
                    + value));
            mandatory.add(required.contains(p.getKey()));
        }
        return "\"{\" space " + members(pairs, mandatory, path) + " \"}\" space";
    }

    /**
     * The members in order: each required one present, each optional one present or not, with a comma before every
     * member but the first present. Each tail (the members from i on, after a member or at the start) is a rule of
     * its own, so that the alternatives of optional members grow linearly, not doubly; the tails are made from the
     * last member back, without recursion, as a schema may have thousands of properties.
     */
    private String members(List<String> pairs, List<Boolean> mandatory, String path) {
        int n = pairs.size();
        String[] afterMember = new String[n + 1];  // the members from i on, after a member: each with its comma
        afterMember[n] = "\"\"";
        for (int i = n - 1; i >= 1; i--) {
            afterMember[i] = tail(pairs.get(i), mandatory.get(i), false, afterMember[i + 1], afterMember[i + 1],
                    path + "-from-" + i + "n");
        }
        // The members from i on at the start, for each i up to the first required member.
        int last = 0;
        while (last < n - 1 && !mandatory.get(last)) {
            last++;
        }
        String atStart = "\"\"";
        for (int i = last; i >= 0; i--) {
            atStart = tail(pairs.get(i), mandatory.get(i), true, afterMember[i + 1], atStart,
                    path + "-from-" + i + "f");
        }
        return atStart;
    }

    /** The members from one on: it (after a comma unless first) then {@code afterIt}, or, if optional, {@code without}. */
    private String tail(String pair, boolean required, boolean first, String afterIt, String without, String path) {
        String present = (first ? "" : "\",\" space ") + pair + " " + afterIt;
        return rule(path, required ? present : present + " | " + without);
    }

    private String ref(String ref, String path) {
        String name = refRules.get(ref);
        if (name != null) {
            return name;
        }
        String defs = ref.startsWith("#/$defs/") ? "#/$defs/" : ref.startsWith("#/definitions/")
                ? "#/definitions/" : null;
        if (defs == null || root == null) {
            throw refuse(path, "$ref " + ref + " is not a reference into #/$defs or #/definitions");
        }
        JsonNode target = root.path(defs.substring(2, defs.length() - 1)).get(ref.substring(defs.length()));
        if (target == null) {
            throw refuse(path, "$ref " + ref + " names no definition");
        }
        name = ruleName("ref-" + ref.substring(defs.length()));
        refRules.put(ref, name);
        rules.put(name, "\"\"");
        rules.put(name, visit(target, ref.substring(1)));
        return name;
    }

    /** A named rule for {@code body}, so that repetitions and references refer to one element. */
    private String rule(String path, String body) {
        String name = ruleName(path.isEmpty() ? "root" : path);
        rules.put(name, body);
        return name;
    }

    /**
     * A rule name from a schema path: its words joined by dashes, the path's last {@value #NAME_PATH} characters at
     * most (a path grows with each level a schema nests, and names written out at every level would make the grammar
     * grow with the square of the depth), made unique by a number.
     */
    private String ruleName(String path) {
        String words = path.substring(Math.max(0, path.length() - 2 * NAME_PATH))
                .replaceAll("[^A-Za-z0-9]+", "-").replaceAll("-+$", "");
        if (words.length() > NAME_PATH) {
            words = "-" + words.substring(words.length() - NAME_PATH).replaceAll("^-+", "");
        }
        String base = prefix + "s" + words;
        String name = base;
        for (int i = suffixes.getOrDefault(base, 2); rules.containsKey(name) || PRIMITIVES.containsKey(name); i++) {
            name = base + "-" + i;
            suffixes.put(base, i + 1);
        }
        return name;
    }

    /** A JSON value exactly, as a literal (then optional space). */
    private String literal(JsonNode value) {
        String json;
        try {
            json = MAPPER.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        return OutputGrammar.literal(json) + " space";
    }

    private int count(JsonNode s, String key, int dflt, String path) {
        JsonNode n = s.get(key);
        if (n == null) {
            return dflt;
        }
        if (!n.canConvertToInt() || n.intValue() < 0 || !n.isIntegralNumber()) {
            throw refuse(path, key + " must be a whole number of at least 0");
        }
        if (n.intValue() > MAX_ITEMS) {
            throw refuse(path, key + " above " + MAX_ITEMS + " is not supported");
        }
        return n.intValue();
    }

    private InvalidRequestException refuse(String path, String what) {
        return new InvalidRequestException(field, field + (path.isEmpty() ? "" : " at " + path) + ": " + what);
    }
}
