package dev.laneway.engine.grammar;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads GBNF, the grammar notation llama.cpp defines: {@code name ::= alternatives} rules, {@code "literals"},
 * {@code [character classes]} ({@code [^...]} negated), {@code .} for any character, {@code ( groups )}, and the
 * repetitions {@code * + ?} and {@code {m}}, {@code {m,}}, {@code {m,n}}; {@code #} starts a comment. A rule may span
 * lines; the next one starts where a name is followed by {@code ::=}. The grammar starts at {@code root}. Token
 * references ({@code <...>}) are refused by name.
 */
final class GbnfParser {
    /** Repetition counts above this are refused: each repetition is expanded into grammar elements. */
    static final int MAX_REPEAT = 2000;
    /** Groups nest at most this deep; the parser descends into each. */
    static final int MAX_NESTING = 256;
    /**
     * The most elements a grammar may expand to, repetitions written out: room for a hundred strings of maxLength
     * 1000 in a JSON schema (about 2000 each), and a bound on what one request's grammar costs to build.
     */
    static final int MAX_ELEMENTS = 1 << 18;

    private final String src;
    private int pos;
    private final Map<String, Integer> ids = new HashMap<>();
    private final List<String> names = new ArrayList<>();
    /** Each rule's alternatives, each a list of elements in {@link Grammar}'s encoding; null until defined. */
    private final List<List<List<int[]>>> rules = new ArrayList<>();
    /** Groups open around the parser's position. */
    private int nesting;
    /** Elements made so far, copies included. */
    private long elements;

    private GbnfParser(String src) {
        this.src = src;
    }

    static Grammar parse(String gbnf) {
        GbnfParser p = new GbnfParser(gbnf);
        p.rules();
        return p.flatten();
    }

    private void rules() {
        space();
        if (pos == src.length()) {
            throw new GrammarException("the grammar is empty");
        }
        while (pos < src.length()) {
            String name = name();
            space();
            if (!src.startsWith("::=", pos)) {
                throw error("expected ::= after rule name " + name);
            }
            pos += 3;
            space();
            int id = id(name);
            if (rules.get(id) != null) {
                throw new GrammarException("rule " + name + " is defined twice");
            }
            rules.set(id, alternatives(false));
            space();
            if (pos < src.length() && !atRuleStart()) {
                throw error("unexpected character '" + src.charAt(pos) + "'");
            }
        }
    }

    private List<List<int[]>> alternatives(boolean nested) {
        List<List<int[]>> alts = new ArrayList<>();
        alts.add(sequence(nested));
        while (pos < src.length() && src.charAt(pos) == '|') {
            pos++;
            space();
            alts.add(sequence(nested));
        }
        return alts;
    }

    private List<int[]> sequence(boolean nested) {
        List<int[]> seq = new ArrayList<>();
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '|' || c == ')' || (!nested && atRuleStart())) {
                break;
            }
            List<int[]> item = item();
            space();
            item = repeated(item);
            seq.addAll(item);
        }
        if (nested && pos < src.length() && src.charAt(pos) != ')' && src.charAt(pos) != '|') {
            throw error("expected )");
        }
        return seq;
    }

    /** One element before any repetition: a literal (one element per character), a class, a reference, a group. */
    private List<int[]> item() {
        char c = src.charAt(pos);
        if (c == '"') {
            pos++;
            List<int[]> chars = new ArrayList<>();
            while (true) {
                if (pos >= src.length()) {
                    throw error("unterminated literal");
                }
                if (src.charAt(pos) == '"') {
                    pos++;
                    break;
                }
                int cp = character();
                chars.add(new int[] {Grammar.CHARS, 1, cp, cp});
                count(1);
            }
            return chars;
        }
        if (c == '[') {
            count(1);
            return List.of(characterClass());
        }
        if (c == '.') {
            pos++;
            count(1);
            return List.of(new int[] {Grammar.NOT_CHARS, 0});
        }
        if (c == '(') {
            if (++nesting > MAX_NESTING) {
                throw error("groups nest deeper than " + MAX_NESTING);
            }
            pos++;
            space();
            int id = generated();
            rules.set(id, alternatives(true));
            if (pos >= src.length() || src.charAt(pos) != ')') {
                throw error("expected )");
            }
            pos++;
            nesting--;
            count(1);
            return List.of(new int[] {Grammar.REF, id});
        }
        if (c == '<') {
            throw error("token references (<...>) are not supported in grammars");
        }
        if (isNameChar(c)) {
            count(1);
            return List.of(new int[] {Grammar.REF, id(name())});
        }
        throw error("unexpected character '" + c + "'");
    }

    /** Applies a repetition after {@code item}, if one follows. */
    private List<int[]> repeated(List<int[]> item) {
        if (pos >= src.length()) {
            return item;
        }
        char c = src.charAt(pos);
        int min;
        int max;
        if (c == '*' || c == '+' || c == '?') {
            pos++;
            min = c == '+' ? 1 : 0;
            max = c == '?' ? 1 : -1;
        } else if (c == '{') {
            pos++;
            space();
            min = pos < src.length() && src.charAt(pos) == ',' ? 0 : number();
            space();
            max = min;
            if (pos < src.length() && src.charAt(pos) == ',') {
                pos++;
                space();
                max = pos < src.length() && src.charAt(pos) == '}' ? -1 : number();
                space();
            }
            if (pos >= src.length() || src.charAt(pos) != '}') {
                throw error("expected } to close the repetition");
            }
            pos++;
            if (max != -1 && max < min) {
                throw error("repetition {" + min + "," + max + "} has its maximum below its minimum");
            }
        } else {
            return item;
        }
        space();
        if (Math.max(min, max) > MAX_REPEAT) {
            throw error("repetitions above " + MAX_REPEAT + " are not supported");
        }
        long copies = min + (max == -1 ? 1 : max - min);
        if (item.size() > 1 && copies > 1) {
            // A literal or sequence repeated is a rule of its own, so that each copy is one reference to it.
            int r = generated();
            rules.set(r, List.of(item));
            item = List.of(new int[] {Grammar.REF, r});
        }
        count(copies * (item.size() + 1) + 1);
        List<int[]> out = new ArrayList<>();
        for (int i = 0; i < min; i++) {
            out.addAll(item);
        }
        if (max == -1) {
            // R ::= item R | ""
            int r = generated();
            List<int[]> again = new ArrayList<>(item);
            again.add(new int[] {Grammar.REF, r});
            rules.set(r, List.of(again, List.of()));
            out.add(new int[] {Grammar.REF, r});
        } else if (max > min) {
            // Nested optionals: R1 ::= item | "", Rk ::= item R(k-1) | ""
            int inner = -1;
            for (int k = 0; k < max - min; k++) {
                int r = generated();
                List<int[]> once = new ArrayList<>(item);
                if (inner >= 0) {
                    once.add(new int[] {Grammar.REF, inner});
                }
                rules.set(r, List.of(once, List.of()));
                inner = r;
            }
            out.add(new int[] {Grammar.REF, inner});
        }
        return out;
    }

    private int[] characterClass() {
        pos++;
        boolean negated = pos < src.length() && src.charAt(pos) == '^';
        if (negated) {
            pos++;
        }
        List<Integer> ranges = new ArrayList<>();
        while (true) {
            if (pos >= src.length()) {
                throw error("unterminated character class");
            }
            if (src.charAt(pos) == ']') {
                pos++;
                break;
            }
            int lo = character();
            int hi = lo;
            if (pos + 1 < src.length() && src.charAt(pos) == '-' && src.charAt(pos + 1) != ']') {
                pos++;
                hi = character();
                if (hi < lo) {
                    throw error("character range is reversed");
                }
            }
            ranges.add(lo);
            ranges.add(hi);
        }
        int[] e = new int[2 + ranges.size()];
        e[0] = negated ? Grammar.NOT_CHARS : Grammar.CHARS;
        e[1] = ranges.size() / 2;
        for (int i = 0; i < ranges.size(); i++) {
            e[2 + i] = ranges.get(i);
        }
        return e;
    }

    /** One character of a literal or class, escapes decoded. */
    private int character() {
        int cp = src.codePointAt(pos);
        if (cp != '\\') {
            pos += Character.charCount(cp);
            return cp;
        }
        if (pos + 1 >= src.length()) {
            throw error("unterminated escape");
        }
        char e = src.charAt(pos + 1);
        pos += 2;
        return switch (e) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '\'', '[', ']', '-', '^', '/' -> e;
            case 'x' -> hex(2);
            case 'u' -> hex(4);
            case 'U' -> hex(8);
            default -> throw error("unknown escape \\" + e);
        };
    }

    private int hex(int digits) {
        if (pos + digits > src.length()) {
            throw error("a \\x, \\u or \\U escape needs " + digits + " hex digits");
        }
        int v;
        try {
            v = Integer.parseUnsignedInt(src.substring(pos, pos + digits), 16);
        } catch (NumberFormatException e) {
            throw error("a \\x, \\u or \\U escape needs " + digits + " hex digits");
        }
        if (v < 0 || v > Character.MAX_CODE_POINT) {
            throw error("escape names no Unicode code point");
        }
        pos += digits;
        return v;
    }

    private int number() {
        int start = pos;
        while (pos < src.length() && Character.isDigit(src.charAt(pos)) && pos - start < 6) {
            pos++;
        }
        if (start == pos) {
            throw error("expected a number in the repetition");
        }
        return Integer.parseInt(src.substring(start, pos));
    }

    private String name() {
        int start = pos;
        while (pos < src.length() && isNameChar(src.charAt(pos))) {
            pos++;
        }
        if (start == pos) {
            throw error("expected a rule name");
        }
        return src.substring(start, pos);
    }

    /** Whether a rule definition ({@code name ::=}) starts here. */
    private boolean atRuleStart() {
        int p = pos;
        while (p < src.length() && isNameChar(src.charAt(p))) {
            p++;
        }
        if (p == pos) {
            return false;
        }
        while (p < src.length() && (src.charAt(p) == ' ' || src.charAt(p) == '\t' || src.charAt(p) == '\r'
                || src.charAt(p) == '\n')) {
            p++;
        }
        return src.startsWith("::=", p);
    }

    /** Skips blanks, line ends and comments. */
    private void space() {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '#') {
                while (pos < src.length() && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                pos++;
            } else {
                return;
            }
        }
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    private int id(String name) {
        return ids.computeIfAbsent(name, n -> {
            names.add(n);
            rules.add(null);
            return names.size() - 1;
        });
    }

    /** A rule of its own for a group or a repetition. */
    private int generated() {
        names.add("(generated " + names.size() + ")");
        rules.add(null);
        return names.size() - 1;
    }

    /** Counts {@code n} more elements, refusing a grammar that expands beyond {@link #MAX_ELEMENTS}. */
    private void count(long n) {
        elements += n;
        if (elements > MAX_ELEMENTS) {
            throw new GrammarException("the grammar expands to more than " + MAX_ELEMENTS + " elements (each"
                    + " repetition is written out as copies of what it repeats); repeat less, or less at a time");
        }
    }

    private GrammarException error(String what) {
        int line = 1;
        int column = 1;
        for (int i = 0; i < Math.min(pos, src.length()); i++) {
            if (src.charAt(i) == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        return new GrammarException("grammar line " + line + ", column " + column + ": " + what);
    }

    private Grammar flatten() {
        Integer root = ids.get("root");
        if (root == null) {
            throw new GrammarException("the grammar has no root rule");
        }
        for (int r = 0; r < rules.size(); r++) {
            if (rules.get(r) == null) {
                throw new GrammarException("rule " + names.get(r) + " is used but not defined");
            }
        }
        refuseLeftRecursion();
        int[] code = new int[64];
        int size = 0;
        int[][] alts = new int[rules.size()][];
        for (int r = 0; r < rules.size(); r++) {
            List<List<int[]>> rule = rules.get(r);
            alts[r] = new int[rule.size()];
            for (int a = 0; a < rule.size(); a++) {
                alts[r][a] = size;
                for (int[] e : rule.get(a)) {
                    if (size + e.length + 1 > code.length) {
                        code = Arrays.copyOf(code, 2 * (size + e.length + 1));
                    }
                    System.arraycopy(e, 0, code, size, e.length);
                    size += e.length;
                }
                if (size + 1 > code.length) {
                    code = Arrays.copyOf(code, 2 * code.length);
                }
                code[size++] = Grammar.END;
            }
        }
        return new Grammar(Arrays.copyOf(code, size), alts, root);
    }

    /**
     * A left-recursive rule would expand forever; llama.cpp refuses them too. Both passes take time in proportion to
     * the grammar and keep their own stacks: a grammar of many rules must not exhaust the thread's.
     */
    private void refuseLeftRecursion() {
        boolean[] nullable = nullable();
        int n = rules.size();
        // The rules each rule may start with: its alternatives' leading references, past nullable ones.
        int[][] leading = new int[n][];
        for (int r = 0; r < n; r++) {
            List<Integer> first = new ArrayList<>();
            for (List<int[]> alt : rules.get(r)) {
                for (int[] e : alt) {
                    if (e[0] != Grammar.REF) {
                        break;
                    }
                    first.add(e[1]);
                    if (!nullable[e[1]]) {
                        break;
                    }
                }
            }
            leading[r] = first.stream().mapToInt(Integer::intValue).toArray();
        }
        int[] mark = new int[n];  // 0 unseen, 1 on the path being followed, 2 done
        for (int r = 0; r < n; r++) {
            if (mark[r] != 0) {
                continue;
            }
            Deque<int[]> path = new ArrayDeque<>();  // {rule, index of the next leading rule to follow}
            path.push(new int[] {r, 0});
            mark[r] = 1;
            while (!path.isEmpty()) {
                int[] top = path.peek();
                if (top[1] == leading[top[0]].length) {
                    mark[top[0]] = 2;
                    path.pop();
                    continue;
                }
                int next = leading[top[0]][top[1]++];
                if (mark[next] == 1) {
                    throw new GrammarException("rule " + names.get(next) + " is left-recursive");
                }
                if (mark[next] == 0) {
                    mark[next] = 1;
                    path.push(new int[] {next, 0});
                }
            }
        }
    }

    /** The rules that may match the empty text: those with an alternative of nullable references only. */
    private boolean[] nullable() {
        int n = rules.size();
        boolean[] nullable = new boolean[n];
        // For each alternative of references only, the references not yet known nullable; each rule's uses in them.
        List<int[]> alternatives = new ArrayList<>();  // {rule, references left}
        List<List<Integer>> usedIn = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            usedIn.add(new ArrayList<>());
        }
        Deque<Integer> found = new ArrayDeque<>();
        for (int r = 0; r < n; r++) {
            for (List<int[]> alt : rules.get(r)) {
                if (alt.stream().allMatch(e -> e[0] == Grammar.REF)) {
                    int a = alternatives.size();
                    alternatives.add(new int[] {r, alt.size()});
                    for (int[] e : alt) {
                        usedIn.get(e[1]).add(a);
                    }
                    if (alt.isEmpty() && !nullable[r]) {
                        nullable[r] = true;
                        found.add(r);
                    }
                }
            }
        }
        while (!found.isEmpty()) {
            for (int a : usedIn.get(found.poll())) {
                int[] alt = alternatives.get(a);
                if (--alt[1] == 0 && !nullable[alt[0]]) {
                    nullable[alt[0]] = true;
                    found.add(alt[0]);
                }
            }
        }
        return nullable;
    }
}
