package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;

import java.util.Map;

/**
 * Jinja2's {@code is iterable}, as Python answers it: strings are iterable too. Templates rely on it (Llama 3.x writes
 * a tool result with {@code tojson} when it "is mapping or is iterable", which a string always is); the engine's own
 * test says no for strings.
 */
final class PythonIterable implements ExpTest {
    @Override
    public String getName() {
        return "iterable";
    }

    @Override
    public boolean evaluate(Object value, JinjavaInterpreter interpreter, Object... args) {
        return value instanceof CharSequence || value instanceof Iterable<?> || value instanceof Map<?, ?>
                || (value != null && value.getClass().isArray());
    }
}
