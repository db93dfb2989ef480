package dev.laneway.spi;

import java.util.Objects;

/**
 * What a generation's output must be: a grammar in GBNF (llama.cpp's notation), a JSON Schema the model turns into
 * one, or any JSON object. Every generated token then keeps the text a prefix of the grammar's language, and the text
 * ends when nothing more may follow.
 *
 * @param kind  how {@code text} is to be read
 * @param text  the GBNF, or the schema as JSON; empty for {@link Kind#JSON_OBJECT}
 * @param field the request field it came from, named by any error about it
 */
public record OutputGrammar(Kind kind, String text, String field) {

    public enum Kind { GBNF, JSON_SCHEMA, JSON_OBJECT }

    public OutputGrammar {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(field, "field");
    }

    public static OutputGrammar gbnf(String gbnf, String field) {
        return new OutputGrammar(Kind.GBNF, gbnf, field);
    }

    public static OutputGrammar jsonSchema(String schemaJson, String field) {
        return new OutputGrammar(Kind.JSON_SCHEMA, schemaJson, field);
    }

    public static OutputGrammar jsonObject(String field) {
        return new OutputGrammar(Kind.JSON_OBJECT, "", field);
    }
}
