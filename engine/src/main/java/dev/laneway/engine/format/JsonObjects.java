package dev.laneway.engine.format;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.file.Path;

/** Reads the JSON object at the top of a model's small JSON files, strictly: a key given twice is an error. */
public final class JsonObjects {
    private static final ObjectMapper STRICT = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .build();

    private JsonObjects() {
    }

    /**
     * The top-level object of {@code json}.
     *
     * @param file     names the source in messages
     * @param expected what the file should hold, e.g. {@code a JSON object of config fields}
     * @throws FormatException when the text is not JSON or not an object
     */
    public static JsonNode read(Path file, byte[] json, String expected) throws FormatException {
        JsonNode root;
        try {
            root = STRICT.readTree(json);
        } catch (IOException e) {
            String why = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
            throw new FormatException(file, "not valid JSON: " + why);
        }
        if (root == null || !root.isObject()) {
            throw new FormatException(file, "expected " + expected);
        }
        return root;
    }
}
