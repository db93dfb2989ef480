package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A function a chat request offers, as the grammar of its calls and a prompt describing it need it.
 *
 * @param name        the function's name
 * @param description what it does; empty when the request says nothing
 * @param parameters  the JSON Schema of its arguments as JSON text; an object of no properties when none is given
 */
record OfferedTool(String name, String description, String parameters) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NO_PARAMETERS =
            "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}";

    /** The functions of {@code tools} as {@link ChatRequest} checked them ({@code {"type", "function": {...}}}). */
    static List<OfferedTool> of(List<Object> tools) {
        List<OfferedTool> offered = new ArrayList<>();
        for (Object tool : tools) {
            Map<?, ?> function = (Map<?, ?>) ((Map<?, ?>) tool).get("function");
            Object description = function.get("description");
            Object parameters = function.get("parameters");
            try {
                offered.add(new OfferedTool((String) function.get("name"), description == null ? ""
                        : description.toString(), parameters == null ? NO_PARAMETERS
                        : JSON.writeValueAsString(parameters)));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("a checked tool's parameters did not write as JSON", e);
            }
        }
        return offered;
    }
}
