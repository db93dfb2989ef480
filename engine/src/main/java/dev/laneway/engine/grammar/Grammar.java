package dev.laneway.engine.grammar;

/**
 * A context-free grammar over Unicode code points, as GBNF writes one ({@link GbnfParser}), flattened into one int
 * array so that a matcher's position is a single int. Every rule is a list of alternatives; an alternative is a
 * sequence of elements ending in {@link #END}:
 * <ul>
 *   <li>{@code CHARS n lo0 hi0 .. lo(n-1) hi(n-1)}: one code point inside one of the n closed ranges;</li>
 *   <li>{@code NOT_CHARS n ...}: one code point outside all of them ({@code .} is NOT_CHARS with no range);</li>
 *   <li>{@code REF r}: rule r;</li>
 *   <li>{@code END}: the end of the alternative.</li>
 * </ul>
 * Repetitions and groups are already expanded into rules of their own. No rule is left-recursive.
 */
public final class Grammar {
    static final int END = 0;
    static final int REF = 1;
    static final int CHARS = 2;
    static final int NOT_CHARS = 3;

    private final int[] code;
    private final int[][] alternatives;
    private final int root;

    Grammar(int[] code, int[][] alternatives, int root) {
        this.code = code;
        this.alternatives = alternatives;
        this.root = root;
    }

    /**
     * Parses GBNF text whose start rule is {@code root}.
     *
     * @throws GrammarException naming what is wrong and where
     */
    public static Grammar parse(String gbnf) {
        return GbnfParser.parse(gbnf);
    }

    int root() {
        return root;
    }

    int kind(int pos) {
        return code[pos];
    }

    /** The start of each alternative of rule {@code rule}. */
    int[] alternatives(int rule) {
        return alternatives[rule];
    }

    /** The rule a REF element names. */
    int rule(int pos) {
        return code[pos + 1];
    }

    /** The position after the element at {@code pos}. */
    int next(int pos) {
        return switch (code[pos]) {
            case END -> throw new IllegalStateException("END has no next element");
            case REF -> pos + 2;
            default -> pos + 2 + 2 * code[pos + 1];
        };
    }

    /** Whether the CHARS or NOT_CHARS element at {@code pos} takes code point {@code cp}. */
    boolean matches(int pos, int cp) {
        int n = code[pos + 1];
        boolean inside = false;
        for (int i = 0; i < n && !inside; i++) {
            inside = cp >= code[pos + 2 + 2 * i] && cp <= code[pos + 3 + 2 * i];
        }
        return inside == (code[pos] == CHARS);
    }

    /** Whether the CHARS or NOT_CHARS element at {@code pos} takes some code point in {@code [lo, hi]}. */
    boolean matchesSomeOf(int pos, int lo, int hi) {
        int n = code[pos + 1];
        for (int i = 0; i < n; i++) {
            int a = code[pos + 2 + 2 * i];
            int b = code[pos + 3 + 2 * i];
            if (code[pos] == CHARS ? a <= hi && b >= lo : a <= lo && b >= hi) {
                return code[pos] == CHARS;
            }
        }
        return code[pos] == NOT_CHARS;
    }
}
