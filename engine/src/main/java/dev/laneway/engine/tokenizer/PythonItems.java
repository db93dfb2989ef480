package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Jinja2's {@code items} filter, {@code d|items} as {@code d.items()}: the key and value pairs of a mapping, in order,
 * for {@code {% for key, value in d|items %}} (Qwen 3.x writes tool parameters and call arguments so). An undefined
 * value gives no pairs, as in Jinja2.
 */
final class PythonItems implements Filter {
    @Override
    public String getName() {
        return "items";
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
        List<List<Object>> items = new ArrayList<>();
        if (var instanceof Map<?, ?> map) {
            map.forEach((k, v) -> items.add(Arrays.asList(k, v)));
        } else if (var != null) {
            throw new IllegalArgumentException("items expects a mapping, got " + var.getClass().getSimpleName());
        }
        return items;
    }
}
