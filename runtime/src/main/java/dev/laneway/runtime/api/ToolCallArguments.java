package dev.laneway.runtime.api;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tool call's arguments as a chat template sees them: the object, for templates that write it with {@code tojson}
 * or walk its items, and, where a template joins it to a string as OpenAI's JSON text (DeepSeek R1's distills,
 * Functionary), that text exactly as the client sent it, rather than a Java rendering of the map.
 */
final class ToolCallArguments extends LinkedHashMap<String, Object> {
    private final String text;

    ToolCallArguments(Map<String, Object> object, String text) {
        super(object);
        this.text = text;
    }

    @Override
    public String toString() {
        return text;
    }
}
