package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * A request body as a JSON object, with typed readers that name the field at fault. An absent field and a JSON
 * {@code null} both read as empty.
 */
final class JsonRequest {
    private final ObjectNode body;

    private JsonRequest(ObjectNode body) {
        this.body = body;
    }

    /** Parses a body; anything but a JSON object is a 400. */
    static JsonRequest parse(byte[] bytes, ObjectMapper mapper) {
        if (bytes == null || bytes.length == 0) {
            throw ApiException.invalidJson("the request body is empty; expected a JSON object");
        }
        JsonNode node;
        try {
            node = mapper.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(bytes);
        } catch (JsonProcessingException e) {
            throw ApiException.invalidJson("the request body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            // bytes the parser took for UTF-16 or UTF-32 JSON, then could not decode
            throw ApiException.invalidJson("the request body is not valid JSON: " + e.getMessage());
        }
        if (!(node instanceof ObjectNode object)) {
            throw ApiException.invalidJson("the request body must be a JSON object");
        }
        return new JsonRequest(object);
    }

    /** A body built here, as one API's request translated into another's. */
    static JsonRequest of(ObjectNode body) {
        return new JsonRequest(body);
    }

    /** The names of the body's fields. */
    java.util.List<String> fieldNames() {
        java.util.List<String> names = new java.util.ArrayList<>();
        body.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** The field's node, or null when it is absent or JSON null. */
    JsonNode raw(String field) {
        JsonNode node = body.get(field);
        return node == null || node.isNull() ? null : node;
    }

    Optional<String> string(String field) {
        JsonNode node = raw(field);
        if (node == null) {
            return Optional.empty();
        }
        if (!node.isTextual()) {
            throw ApiException.invalidType(field, field + " must be a string");
        }
        return Optional.of(node.textValue());
    }

    OptionalInt integer(String field) {
        JsonNode node = raw(field);
        return node == null ? OptionalInt.empty() : OptionalInt.of(integer(node, field));
    }

    OptionalDouble number(String field) {
        JsonNode node = raw(field);
        if (node == null) {
            return OptionalDouble.empty();
        }
        if (!node.isNumber()) {
            throw ApiException.invalidType(field, field + " must be a number");
        }
        return OptionalDouble.of(node.doubleValue());
    }

    Optional<Boolean> bool(String field) {
        JsonNode node = raw(field);
        if (node == null) {
            return Optional.empty();
        }
        if (!node.isBoolean()) {
            throw ApiException.invalidType(field, field + " must be true or false");
        }
        return Optional.of(node.booleanValue());
    }

    /** A whole number that fits an int; 3.0 counts as 3. */
    static int integer(JsonNode node, String param) {
        if (!node.isNumber() || !node.canConvertToExactIntegral()) {
            throw ApiException.invalidType(param, param + " must be an integer");
        }
        if (!node.canConvertToInt()) {
            throw ApiException.invalidValue(param, param + " is out of range: " + node.asText());
        }
        return node.intValue();
    }

    /** A whole number that fits a long. */
    static long longInteger(JsonNode node, String param) {
        if (!node.isNumber() || !node.canConvertToExactIntegral()) {
            throw ApiException.invalidType(param, param + " must be an integer");
        }
        if (!node.canConvertToLong()) {
            throw ApiException.invalidValue(param, param + " is out of range: " + node.asText());
        }
        return node.longValue();
    }

    /** {@code object.field}, a string; {@code param} names the object in the error. */
    static String string(JsonNode object, String field, String param) {
        JsonNode value = object.get(field);
        if (value == null || !value.isTextual()) {
            throw ApiException.invalidType(param + "." + field, param + "." + field + " must be a string");
        }
        return value.textValue();
    }
}
