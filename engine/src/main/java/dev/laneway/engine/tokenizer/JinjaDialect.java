package dev.laneway.engine.tokenizer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Bridges the gap between Python's Jinja2, in which chat templates are written, and the Java engine that renders them.
 * The template text is rewritten, never its meaning:
 * <ul>
 *   <li>{@code for x in seq if cond} (a filtered loop, whose condition the engine ignores) becomes the loop with its
 *       body inside {@code if cond}; {@code loop.index} then counts the skipped items too;</li>
 *   <li>{@code loop.previtem} and {@code loop.nextitem} become the neighbouring items of the loop's sequence, and a
 *       loop over a mapping walks its keys, as in Python;</li>
 *   <li>{@code not a == b} means {@code not (a == b)} in Python; the Java engine binds {@code not} tighter, so the
 *       operand of a unary {@code not} is put in parentheses (it ends at {@code and}, {@code or}, {@code if},
 *       {@code else}, a comma or a closing bracket, as Python's precedence says).</li>
 *   <li>A keyword argument whose value is an expression, {@code namespace(i=messages|length - 1)}, gets parentheses
 *       around the value, which the Java engine needs.</li>
 *   <li>{@code seq[::-1]} becomes {@code seq|reverse|list}, and a binary {@code +} gets spaces around it (the
 *       engine does not parse {@code n+1}).</li>
 *   <li>{@code lstrip_blocks} is applied here, as Jinja2 does it: only whitespace between the start of a line and a
 *       block or comment tag is removed (the Java engine's own option also eats spaces after text on the line).</li>
 *   <li>{@code {% generation %}} markers, which only matter for training masks, are dropped.</li>
 *   <li>A single newline at the end of the template is dropped, as Jinja2 does by default.</li>
 * </ul>
 */
final class JinjaDialect {
    private JinjaDialect() {
    }

    /** Keywords that cannot end an operand: a {@code not} after them is unary. */
    private static final Set<String> KEYWORDS = Set.of("and", "or", "not", "if", "else", "elif", "in", "is", "for",
            "set", "return", "with", "filter", "print", "do");

    static String adapt(String template) {
        // Jinja2 drops a single trailing newline of a template (keep_trailing_newline is off).
        String source = template.endsWith("\n") ? template.substring(0, template.length() - 1) : template;
        StringBuilder out = new StringBuilder(source.length() + 64);
        Deque<String> loops = new ArrayDeque<>();
        Deque<Boolean> filters = new ArrayDeque<>();
        int i = 0;
        int n = source.length();
        while (i < n) {
            int open = nextTag(source, i);
            if (open < 0) {
                out.append(source, i, n);
                break;
            }
            out.append(source, i, open);
            char kind = source.charAt(open + 1);
            if (kind == '#') {
                // A comment is dropped here, with the whitespace Jinja2 takes with it: lstrip_blocks before it, the
                // newline after it (trim_blocks), or all whitespace on a side marked '-'. (Left to the engine, a
                // '-%}' before it stripped the next line's indentation too.)
                int close = source.indexOf("#}", open + 2);
                if (close < 0) {
                    out.append(source, open, n);
                    break;
                }
                char first = source.charAt(open + 2);
                if (first == '-') {
                    while (!out.isEmpty() && Character.isWhitespace(out.charAt(out.length() - 1))) {
                        out.setLength(out.length() - 1);
                    }
                } else {
                    lstrip(out, first);
                }
                // An empty output in its place stops a neighbouring tag's '-' from stripping past it, as a
                // comment does in Jinja2.
                out.append("{{ '' }}");
                i = close + 2;
                char last = source.charAt(close - 1);
                if (last == '-' && close - 1 > open + 2) {
                    while (i < n && Character.isWhitespace(source.charAt(i))) {
                        i++;
                    }
                } else if (last != '+') {
                    if (source.startsWith("\r\n", i)) {
                        i += 2;
                    } else if (i < n && source.charAt(i) == '\n') {
                        i++;
                    }
                }
                continue;
            }
            String closer = kind == '{' ? "}}" : "%}";
            int close = tagEnd(source, open + 2, closer);
            if (close < 0) {
                // Unterminated tag: leave the rest for the engine to report.
                out.append(source, open, n);
                break;
            }
            String body = neighbours(source.substring(open + 2, close), loops);
            i = close + 2;
            if (kind == '{') {
                out.append("{{").append(rewriteTag(body, false)).append("}}");
                continue;
            }
            String name = tagName(body);
            if (name.equals("generation") || name.equals("endgeneration")) {
                continue;
            }
            Matcher filter = FILTERED_FOR.matcher(body);
            boolean filtered = name.equals("for") && filter.matches() && !filter.group(3).contains(" else ");
            if (name.equals("for")) {
                Matcher m = FOR.matcher(body);
                loops.push(m.matches() && !m.group(1).contains(" if ") && !m.group(1).endsWith("recursive")
                        ? m.group(1) : "");
                filters.push(filtered);
            }
            lstrip(out, body.isEmpty() ? ' ' : body.charAt(0));
            if (filtered) {
                // for X in SEQ if COND: the engine ignores the condition; the body runs inside an if instead.
                out.append("{%").append(rewriteTag(filter.group(1) + loopItems(filter.group(2)) + " ", false))
                        .append("%}")
                        .append("{%").append(rewriteTag(" if " + filter.group(3) + filter.group(4), false))
                        .append("%}");
                continue;
            }
            if (name.equals("endfor") && !loops.isEmpty()) {
                loops.pop();
                if (filters.pop()) {
                    String rest = body.strip();
                    boolean trims = rest.startsWith("-");
                    out.append(trims ? "{%- endif %}" : "{% endif %}")
                            .append("{%").append(trims ? body.substring(body.indexOf('-') + 1) : body).append("%}");
                    continue;
                }
            }
            if (name.equals("raw")) {
                int endRaw = findEndRaw(source, i);
                out.append("{%").append(body).append("%}").append(source, i, endRaw);
                i = endRaw;
                continue;
            }
            if (name.equals("for")) {
                Matcher m = FOR.matcher(body);
                if (m.matches() && !m.group(1).endsWith("recursive")) {
                    body = body.substring(0, m.start(1)) + loopItems(m.group(1)) + body.substring(m.end(1));
                }
            }
            boolean declaresParameters = name.equals("macro") || name.equals("call");
            out.append("{%").append(rewriteTag(body, declaresParameters)).append("%}");
        }
        return out.toString();
    }

    private static final Pattern FILTERED_FOR = Pattern.compile(
            "(\\s*[-+]?\\s*for\\s+.+?\\s+in\\s+)(.+?)\\s+if\\s+(.+?)(\\s*[-+]?\\s*)", Pattern.DOTALL);
    /** A loop's sequence, walked as Python walks it (a mapping's keys, see {@link PythonLoopItems}). */
    private static String loopItems(String sequence) {
        return "(" + sequence + ")|" + PythonLoopItems.NAME;
    }

    private static final Pattern FOR = Pattern.compile("\\s*[-+]?\\s*for\\s+.+?\\s+in\\s+(.+?)\\s*[-+]?\\s*", Pattern.DOTALL);

    /**
     * {@code loop.previtem} and {@code loop.nextitem}, which the engine's loop lacks, as the items of the innermost
     * loop's sequence before and after this one ({@code none} at the ends); {@code loops} holds the sequences of the
     * loops around the tag, innermost first ("" for a filtered or recursive loop, left as it is).
     */
    private static String neighbours(String body, Deque<String> loops) {
        if (loops.isEmpty() || loops.peek().isEmpty() || !body.contains("loop.")) {
            return body;
        }
        String seq = "(" + loops.peek() + ")";
        return body.replace("loop.previtem", "(" + seq + "[loop.index0 - 1] if loop.index0 > 0 else none)")
                .replace("loop.nextitem", "(" + seq + "[loop.index0 + 1] if not loop.last else none)");
    }

    private static int nextTag(String s, int from) {
        for (int i = s.indexOf('{', from); i >= 0 && i + 1 < s.length(); i = s.indexOf('{', i + 1)) {
            char c = s.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
        }
        return -1;
    }

    /** Where {@code closer} ends the tag, skipping string literals. */
    private static int tagEnd(String s, int from, String closer) {
        char quote = 0;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quote != 0) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (s.startsWith(closer, i)) {
                return i;
            }
        }
        return -1;
    }

    private static int findEndRaw(String s, int from) {
        int i = from;
        while (true) {
            int open = s.indexOf("{%", i);
            if (open < 0) {
                return s.length();
            }
            int close = s.indexOf("%}", open + 2);
            if (close < 0) {
                return s.length();
            }
            if (tagName(s.substring(open + 2, close)).equals("endraw")) {
                return open;
            }
            i = close + 2;
        }
    }

    private static String tagName(String body) {
        String t = body.strip();
        if (t.startsWith("-") || t.startsWith("+")) {
            t = t.substring(1).strip();
        }
        int end = 0;
        while (end < t.length() && Character.isJavaIdentifierPart(t.charAt(end))) {
            end++;
        }
        return t.substring(0, end);
    }

    /** Jinja2's lstrip_blocks: drop spaces and tabs between the line start and a tag without a {@code +}/{@code -}. */
    private static void lstrip(StringBuilder out, char firstOfBody) {
        if (firstOfBody == '+' || firstOfBody == '-') {
            return;
        }
        int k = out.length();
        while (k > 0 && (out.charAt(k - 1) == ' ' || out.charAt(k - 1) == '\t')) {
            k--;
        }
        if (k == 0 || out.charAt(k - 1) == '\n') {
            out.setLength(k);
        }
    }

    /** Rewrites the expression text of one tag, keeping its whitespace-control markers. */
    static String rewriteTag(String body, boolean declaresParameters) {
        int start = 0;
        int end = body.length();
        if (start < end && (body.charAt(start) == '-' || body.charAt(start) == '+')) {
            start++;
        }
        if (end > start && (body.charAt(end - 1) == '-' || body.charAt(end - 1) == '+')) {
            end--;
        }
        return body.substring(0, start) + rewriteExpression(body.substring(start, end), declaresParameters)
                + body.substring(end);
    }

    private enum Kind { SPACE, STRING, NUMBER, NAME, OPEN, CLOSE, COMMA, OP }

    private record Token(Kind kind, String text) {
    }

    private record Pending(int depth, boolean untilCommaOnly) {
    }

    static String rewriteExpression(String expr, boolean declaresParameters) {
        List<Token> tokens = lex(expr);
        StringBuilder out = new StringBuilder(expr.length() + 16);
        Deque<Character> brackets = new ArrayDeque<>();
        Deque<Pending> pending = new ArrayDeque<>();
        Token previous = null;
        for (int i = 0; i < tokens.size(); i++) {
            Token t = tokens.get(i);
            int depth = brackets.size();
            switch (t.kind) {
                case SPACE -> {
                    out.append(t.text);
                    continue;
                }
                case CLOSE -> {
                    closeAt(pending, depth, false, out);
                    brackets.poll();
                    out.append(t.text);
                }
                case COMMA -> {
                    closeAt(pending, depth, false, out);
                    out.append(t.text);
                }
                case OPEN -> {
                    if (t.text.equals("[") && matches(tokens, i + 1, ":", ":", "-", "1", "]")) {
                        out.append("|reverse|list");
                        i = skip(tokens, i + 1, 5);
                        previous = new Token(Kind.CLOSE, "]");
                        continue;
                    }
                    brackets.push(t.text.charAt(0));
                    out.append(t.text);
                }
                case NAME -> {
                    if (Set.of("and", "or", "if", "else").contains(t.text)) {
                        closeAt(pending, depth, true, out);
                        out.append(t.text);
                    } else if (t.text.equals("not") && !endsOperand(previous) && !isKeyword(previous, "is")
                            && !nextIsName(tokens, i + 1, "in")) {
                        out.append("not (");
                        pending.push(new Pending(depth, false));
                        i = nextSignificant(tokens, i + 1) - 1;
                    } else if (!declaresParameters && !brackets.isEmpty() && brackets.peek() == '('
                            && previous != null && (previous.kind == Kind.OPEN || previous.kind == Kind.COMMA)
                            && nextIsOp(tokens, i + 1, "=")) {
                        int eq = nextSignificant(tokens, i + 1);
                        out.append(t.text).append('=').append('(');
                        pending.push(new Pending(depth, true));
                        i = nextSignificant(tokens, eq + 1) - 1;
                        previous = new Token(Kind.OP, "=");
                        continue;
                    } else {
                        out.append(t.text);
                    }
                }
                case OP -> {
                    // The engine reads "+1" after an operand as a signed number, so "n+1" does not parse; "n + 1"
                    // does.
                    boolean binaryPlus = t.text.equals("+") && endsOperand(previous);
                    out.append(binaryPlus ? " + " : t.text);
                }
                default -> out.append(t.text);
            }
            previous = t;
        }
        while (!pending.isEmpty()) {
            pending.pop();
            trimTrailingSpaceInto(out);
        }
        return out.toString();
    }

    /**
     * Closes the pending parentheses opened at this bracket depth: all of them at a comma or closing bracket, only
     * those of {@code not} operands at {@code and}/{@code or}/{@code if}/{@code else}.
     */
    private static void closeAt(Deque<Pending> pending, int depth, boolean onlyNot, StringBuilder out) {
        while (!pending.isEmpty() && pending.peek().depth == depth && !(onlyNot && pending.peek().untilCommaOnly)) {
            pending.pop();
            trimTrailingSpaceInto(out);
        }
    }

    /** Appends ")" before any whitespace just written, so {@code not x and} becomes {@code not (x) and}. */
    private static void trimTrailingSpaceInto(StringBuilder out) {
        int k = out.length();
        while (k > 0 && Character.isWhitespace(out.charAt(k - 1))) {
            k--;
        }
        out.insert(k, ')');
    }

    private static boolean endsOperand(Token t) {
        if (t == null) {
            return false;
        }
        return switch (t.kind) {
            case STRING, NUMBER, CLOSE -> true;
            case NAME -> !KEYWORDS.contains(t.text);
            default -> false;
        };
    }

    private static boolean isKeyword(Token t, String word) {
        return t != null && t.kind == Kind.NAME && t.text.equals(word);
    }

    private static int nextSignificant(List<Token> tokens, int from) {
        int i = from;
        while (i < tokens.size() && tokens.get(i).kind == Kind.SPACE) {
            i++;
        }
        return i;
    }

    private static boolean nextIsName(List<Token> tokens, int from, String name) {
        int i = nextSignificant(tokens, from);
        return i < tokens.size() && tokens.get(i).kind == Kind.NAME && tokens.get(i).text.equals(name);
    }

    private static boolean nextIsOp(List<Token> tokens, int from, String op) {
        int i = nextSignificant(tokens, from);
        return i < tokens.size() && tokens.get(i).kind == Kind.OP && tokens.get(i).text.equals(op);
    }

    private static boolean matches(List<Token> tokens, int from, String... texts) {
        int i = from;
        for (String text : texts) {
            i = nextSignificant(tokens, i);
            if (i >= tokens.size() || !tokens.get(i).text.equals(text)) {
                return false;
            }
            i++;
        }
        return true;
    }

    /** The index of the last of {@code count} significant tokens starting at {@code from}. */
    private static int skip(List<Token> tokens, int from, int count) {
        int i = from - 1;
        for (int k = 0; k < count; k++) {
            i = nextSignificant(tokens, i + 1);
        }
        return i;
    }

    private static List<Token> lex(String s) {
        List<Token> tokens = new ArrayList<>();
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            int j = i + 1;
            Kind kind;
            if (Character.isWhitespace(c)) {
                while (j < n && Character.isWhitespace(s.charAt(j))) {
                    j++;
                }
                kind = Kind.SPACE;
            } else if (c == '\'' || c == '"') {
                while (j < n && s.charAt(j) != c) {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                j = Math.min(j + 1, n);
                kind = Kind.STRING;
            } else if (Character.isDigit(c)) {
                while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '.' || s.charAt(j) == '_')) {
                    j++;
                }
                kind = Kind.NUMBER;
            } else if (Character.isJavaIdentifierStart(c)) {
                while (j < n && Character.isJavaIdentifierPart(s.charAt(j))) {
                    j++;
                }
                kind = Kind.NAME;
            } else if (c == '(' || c == '[' || c == '{') {
                kind = Kind.OPEN;
            } else if (c == ')' || c == ']' || c == '}') {
                kind = Kind.CLOSE;
            } else if (c == ',') {
                kind = Kind.COMMA;
            } else {
                // Two-character operators, so that "==" is never read as a keyword argument's "=".
                if (j < n && "=!<>/*".indexOf(c) >= 0 && (s.charAt(j) == '=' || (c == '/' || c == '*') && s.charAt(j) == c)) {
                    j++;
                }
                kind = Kind.OP;
            }
            tokens.add(new Token(kind, s.substring(i, j)));
            i = j;
        }
        return tokens;
    }
}
