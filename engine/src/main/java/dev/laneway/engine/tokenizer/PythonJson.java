package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code tojson} filter as Hugging Face templates expect it: Python's {@code json.dumps(x, ensure_ascii=False)},
 * with its {@code ", "} and {@code ": "} separators, and {@code indent} / {@code sort_keys} when given.
 */
final class PythonJson implements Filter {

    @Override
    public String getName() {
        return "tojson";
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
        int indent = args.length > 0 && args[0] != null ? Integer.parseInt(args[0].strip()) : -1;
        return dumps(var, indent, false);
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
        Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : (args.length > 0 ? args[0] : null);
        boolean sortKeys = Boolean.TRUE.equals(kwargs.get("sort_keys"));
        return dumps(var, indent instanceof Number n ? n.intValue() : -1, sortKeys);
    }

    /** {@code json.dumps}; {@code indent < 0} for the single-line form. */
    static String dumps(Object value, int indent, boolean sortKeys) {
        StringBuilder out = new StringBuilder();
        write(out, value, indent, 0, sortKeys);
        return out.toString();
    }

    private static void write(StringBuilder out, Object v, int indent, int level, boolean sortKeys) {
        if (v == null || v == PythonNone.NONE) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            out.append(d == Math.rint(d) && Math.abs(d) < 1e16 ? String.format("%.1f", d) : Double.toString(d));
        } else if (v instanceof Number n) {
            out.append(n);
        } else if (v instanceof Map<?, ?> m) {
            List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
            if (sortKeys) {
                entries.sort((a, b) -> String.valueOf(a.getKey()).compareTo(String.valueOf(b.getKey())));
            }
            out.append('{');
            for (int i = 0; i < entries.size(); i++) {
                separate(out, i, indent, level + 1);
                string(out, String.valueOf(entries.get(i).getKey()));
                out.append(": ");
                write(out, entries.get(i).getValue(), indent, level + 1, sortKeys);
            }
            close(out, '}', entries.isEmpty(), indent, level);
        } else if (v instanceof Iterable<?> || v.getClass().isArray()) {
            List<Object> items = new ArrayList<>();
            if (v instanceof Iterable<?> it) {
                it.forEach(items::add);
            } else {
                for (int i = 0; i < Array.getLength(v); i++) {
                    items.add(Array.get(v, i));
                }
            }
            out.append('[');
            for (int i = 0; i < items.size(); i++) {
                separate(out, i, indent, level + 1);
                write(out, items.get(i), indent, level + 1, sortKeys);
            }
            close(out, ']', items.isEmpty(), indent, level);
        } else {
            string(out, v.toString());
        }
    }

    private static void separate(StringBuilder out, int index, int indent, int level) {
        if (index > 0) {
            out.append(indent < 0 ? ", " : ",");
        }
        if (indent >= 0) {
            out.append('\n').append(" ".repeat(indent * level));
        }
    }

    private static void close(StringBuilder out, char bracket, boolean empty, int indent, int level) {
        if (indent >= 0 && !empty) {
            out.append('\n').append(" ".repeat(indent * level));
        }
        out.append(bracket);
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
