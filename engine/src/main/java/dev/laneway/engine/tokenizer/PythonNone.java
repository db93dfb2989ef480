package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.util.HasObjectTruthValue;

/**
 * Python's {@code None} as a message's content (an assistant message that only calls tools): a value, not a missing
 * one. The engine treats a variable holding Java's null as unset and looks it up in the enclosing scopes, so a macro
 * called with null content read the content of the previous message instead (Qwen 3.5's template renders every
 * message through such a macro). This stands in for None: false in a test, {@code is none}, {@code is defined}, shown
 * as nothing, and {@code null} in JSON.
 */
final class PythonNone implements HasObjectTruthValue {
    static final PythonNone NONE = new PythonNone();

    private PythonNone() {
    }

    @Override
    public boolean getObjectTruthValue() {
        return false;
    }

    @Override
    public String toString() {
        return "";
    }

    /** The {@code none} test, true for null and for this. */
    static final class IsNone implements ExpTest {
        @Override
        public String getName() {
            return "none";
        }

        @Override
        public boolean evaluate(Object value, JinjavaInterpreter interpreter, Object... args) {
            return value == null || value == NONE;
        }
    }
}
