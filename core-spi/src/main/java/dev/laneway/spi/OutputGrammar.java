package dev.laneway.spi;

import java.util.List;
import java.util.Objects;

/**
 * What a generation's output must be: a grammar in GBNF (llama.cpp's notation), a JSON Schema the model turns into
 * one, or any JSON object. Every generated token then keeps the text a prefix of the grammar's language, and the text
 * ends when nothing more may follow.
 *
 * @param kind        how {@code text} is to be read
 * @param text        the GBNF, or the schema as JSON; empty for {@link Kind#JSON_OBJECT}
 * @param field       the request field it came from, named by any error about it
 * @param schemaRules for GBNF only: rules the GBNF refers to and does not define, each the JSON values a schema
 *                    allows (a tool call's arguments inside its call syntax, say)
 */
public record OutputGrammar(Kind kind, String text, String field, List<SchemaRule> schemaRules) {

    public enum Kind { GBNF, JSON_SCHEMA, JSON_OBJECT }

    /**
     * A GBNF rule defined by a JSON Schema.
     *
     * @param name   the rule's name in the GBNF
     * @param schema the schema as JSON
     * @param field  the request field the schema came from, for errors
     */
    public record SchemaRule(String name, String schema, String field) {
        public SchemaRule {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(schema, "schema");
            Objects.requireNonNull(field, "field");
        }
    }

    public OutputGrammar {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(field, "field");
        schemaRules = List.copyOf(schemaRules);
        if (kind != Kind.GBNF && !schemaRules.isEmpty()) {
            throw new IllegalArgumentException("only a GBNF grammar has schema rules");
        }
    }

    public OutputGrammar(Kind kind, String text, String field) {
        this(kind, text, field, List.of());
    }

    public static OutputGrammar gbnf(String gbnf, String field) {
        return new OutputGrammar(Kind.GBNF, gbnf, field);
    }

    /** GBNF whose rules {@code schemaRules} are defined by JSON Schemas. */
    public static OutputGrammar gbnf(String gbnf, List<SchemaRule> schemaRules, String field) {
        return new OutputGrammar(Kind.GBNF, gbnf, field, schemaRules);
    }

    public static OutputGrammar jsonSchema(String schemaJson, String field) {
        return new OutputGrammar(Kind.JSON_SCHEMA, schemaJson, field);
    }

    public static OutputGrammar jsonObject(String field) {
        return new OutputGrammar(Kind.JSON_OBJECT, "", field);
    }

    /** {@code text} as a GBNF string literal, quoted and escaped. */
    public static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        text.codePoints().forEach(c -> {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7F) {
                        out.append(String.format("\\x%02X", c));
                    } else {
                        out.appendCodePoint(c);
                    }
                }
            }
        });
        return out.append('"').toString();
    }
}
