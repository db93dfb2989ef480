package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;

import java.util.ArrayList;
import java.util.Map;

/**
 * What a {@code for} loop walks, as Python walks it: a mapping gives its keys (the engine would give its values);
 * anything else is left as it is. {@link JinjaDialect} applies it to every loop's sequence.
 */
final class PythonLoopItems implements Filter {
    static final String NAME = "laneway_loop_items";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
        return var instanceof Map<?, ?> map ? new ArrayList<>(map.keySet()) : var;
    }
}
