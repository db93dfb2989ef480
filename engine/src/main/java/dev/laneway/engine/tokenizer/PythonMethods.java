package dev.laneway.engine.tokenizer;

import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The Python string and dict methods Hugging Face chat templates call ({@code content.strip()},
 * {@code role.startswith('u')}, {@code message.get('content', '')}, ...), which the template engine, seeing Java
 * objects, would not find. Consulted before the engine's own resolvers; anything else falls through to them.
 */
final class PythonMethods extends ELResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (method == null) {
            return null;
        }
        Object[] args = params == null ? new Object[0] : params;
        Object result;
        if (base instanceof String s) {
            result = stringMethod(s, method.toString(), args);
        } else if (base instanceof Map<?, ?> m) {
            result = dictMethod(m, method.toString(), args);
        } else {
            return null;
        }
        if (result == NOT_HANDLED) {
            return null;
        }
        context.setPropertyResolved(true);
        return result;
    }

    private static final Object NOT_HANDLED = new Object();

    private static Object stringMethod(String s, String name, Object[] args) {
        return switch (name) {
            case "strip" -> strip(s, charsArg(args), true, true);
            case "lstrip" -> strip(s, charsArg(args), true, false);
            case "rstrip" -> strip(s, charsArg(args), false, true);
            case "startswith" -> anyOf(args, p -> s.startsWith(p));
            case "endswith" -> anyOf(args, p -> s.endsWith(p));
            case "upper" -> s.toUpperCase(java.util.Locale.ROOT);
            case "lower" -> s.toLowerCase(java.util.Locale.ROOT);
            case "title" -> title(s);
            case "capitalize" -> s.isEmpty() ? s
                    : s.substring(0, 1).toUpperCase(java.util.Locale.ROOT) + s.substring(1).toLowerCase(java.util.Locale.ROOT);
            case "split" -> split(s, args.length > 0 && args[0] != null ? args[0].toString() : null,
                    args.length > 1 ? ((Number) args[1]).intValue() : -1);
            case "splitlines" -> splitLines(s);
            case "replace" -> replace(s, str(args, 0), str(args, 1), args.length > 2 ? ((Number) args[2]).intValue() : -1);
            case "find" -> (long) s.indexOf(str(args, 0));
            case "count" -> (long) count(s, str(args, 0));
            case "join" -> join(s, args.length > 0 ? args[0] : null);
            default -> NOT_HANDLED;
        };
    }

    private static Object dictMethod(Map<?, ?> m, String name, Object[] args) {
        return switch (name) {
            case "items" -> {
                List<List<Object>> items = new ArrayList<>();
                m.forEach((k, v) -> items.add(java.util.Arrays.asList(k, v)));
                yield items;
            }
            case "keys" -> new ArrayList<>(m.keySet());
            case "values" -> new ArrayList<>(m.values());
            case "get" -> args.length == 0 ? null
                    : m.containsKey(args[0]) ? m.get(args[0]) : (args.length > 1 ? args[1] : null);
            default -> NOT_HANDLED;
        };
    }

    private static String charsArg(Object[] args) {
        return args.length > 0 && args[0] != null ? args[0].toString() : null;
    }

    private static String str(Object[] args, int i) {
        if (i >= args.length || args[i] == null) {
            throw new IllegalArgumentException("missing string argument " + (i + 1));
        }
        return args[i].toString();
    }

    /** Python's strip family: whitespace, or any of {@code chars}. */
    static String strip(String s, String chars, boolean left, boolean right) {
        int start = 0;
        int end = s.length();
        while (left && start < end && stripped(s.charAt(start), chars)) {
            start++;
        }
        while (right && end > start && stripped(s.charAt(end - 1), chars)) {
            end--;
        }
        return s.substring(start, end);
    }

    private static boolean stripped(char c, String chars) {
        return chars == null ? Character.isWhitespace(c) || Character.isSpaceChar(c) : chars.indexOf(c) >= 0;
    }

    private static boolean anyOf(Object[] args, java.util.function.Predicate<String> test) {
        if (args.length == 0 || args[0] == null) {
            return false;
        }
        if (args[0] instanceof Collection<?> options) {
            return options.stream().anyMatch(o -> o != null && test.test(o.toString()));
        }
        return test.test(args[0].toString());
    }

    private static String title(String s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean previousIsLetter = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            out.append(previousIsLetter ? Character.toLowerCase(c) : Character.toUpperCase(c));
            previousIsLetter = Character.isLetter(c);
        }
        return out.toString();
    }

    /** Python's split: on runs of whitespace when {@code sep} is null, else on every {@code sep}. */
    static List<String> split(String s, String sep, int maxSplit) {
        List<String> parts = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && Character.isWhitespace(s.charAt(i))) {
                    i++;
                }
                if (i == n) {
                    break;
                }
                if (maxSplit >= 0 && parts.size() == maxSplit) {
                    parts.add(s.substring(i));
                    break;
                }
                int j = i;
                while (j < n && !Character.isWhitespace(s.charAt(j))) {
                    j++;
                }
                parts.add(s.substring(i, j));
                i = j;
            }
            return parts;
        }
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        int at;
        while ((maxSplit < 0 || parts.size() < maxSplit) && (at = s.indexOf(sep, from)) >= 0) {
            parts.add(s.substring(from, at));
            from = at + sep.length();
        }
        parts.add(s.substring(from));
        return parts;
    }

    /** Python's splitlines: no empty last line after a final line break, no lines at all for "". */
    static List<String> splitLines(String s) {
        List<String> lines = new ArrayList<>(List.of(s.split("\r\n|\r|\n", -1)));
        if (lines.get(lines.size() - 1).isEmpty()) {
            lines.remove(lines.size() - 1);
        }
        return lines;
    }

    private static String replace(String s, String old, String replacement, int count) {
        if (count < 0) {
            return s.replace(old, replacement);
        }
        StringBuilder out = new StringBuilder();
        int from = 0;
        int at;
        int done = 0;
        while (done < count && !old.isEmpty() && (at = s.indexOf(old, from)) >= 0) {
            out.append(s, from, at).append(replacement);
            from = at + old.length();
            done++;
        }
        return out.append(s.substring(from)).toString();
    }

    private static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    private static String join(String sep, Object items) {
        List<String> parts = new ArrayList<>();
        if (items instanceof Iterable<?> it) {
            it.forEach(o -> parts.add(String.valueOf(o)));
        } else if (items != null) {
            throw new IllegalArgumentException("join expects a list, got " + items.getClass().getSimpleName());
        }
        return String.join(sep, parts);
    }

    /** {@code text[i]}, counting from the end for a negative {@code i}; other property access is the engine's. */
    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        // The engine hands an index over as its decimal text.
        if (base instanceof String s && property != null && property.toString().matches("-?\\d{1,9}")) {
            long index = Long.parseLong(property.toString());
            long i = index < 0 ? s.length() + index : index;
            context.setPropertyResolved(true);
            return i >= 0 && i < s.length() ? String.valueOf(s.charAt((int) i)) : null;
        }
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
