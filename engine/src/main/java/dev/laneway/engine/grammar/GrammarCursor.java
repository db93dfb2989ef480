package dev.laneway.engine.grammar;

import dev.laneway.engine.sample.TokenConstraint;

/** Where one generation is in its grammar: what the next token may be, and the move each chosen token makes. */
public final class GrammarCursor implements TokenConstraint {
    private final GrammarAutomaton automaton;
    private final int[] endOfText;
    private GrammarAutomaton.Node node;

    GrammarCursor(GrammarAutomaton automaton, int[] endOfText) {
        this.automaton = automaton;
        this.endOfText = endOfText;
        this.node = automaton.start();
    }

    @Override
    public boolean allows(int token) {
        if (isEndOfText(token)) {
            return GrammarAutomaton.accepting(node);
        }
        return automaton.afterToken(node, token) != GrammarAutomaton.DEAD;
    }

    @Override
    public boolean restrict(float[] logits, int vocab) {
        long[] mask = automaton.mask(node);
        boolean any = false;
        for (int w = 0; w << 6 < vocab; w++) {
            long bits = w < mask.length ? mask[w] : 0;
            any |= bits != 0;
            if (bits == -1L) {
                continue;
            }
            int top = Math.min(64, vocab - (w << 6));
            for (int b = 0; b < top; b++) {
                if ((bits & (1L << b)) == 0) {
                    logits[(w << 6) + b] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        return any;
    }

    /** Moves past a token the grammar allows (an end-of-text token moves nowhere). */
    public void accept(int token) {
        if (isEndOfText(token)) {
            return;
        }
        GrammarAutomaton.Node after = automaton.afterToken(node, token);
        if (after == GrammarAutomaton.DEAD) {
            throw new IllegalStateException("token " + token + " is not allowed by the grammar here");
        }
        node = after;
    }

    /** Whether nothing but the end of the text may follow. */
    public boolean complete() {
        return GrammarAutomaton.complete(node);
    }

    private boolean isEndOfText(int token) {
        for (int e : endOfText) {
            if (e == token) {
                return true;
            }
        }
        return false;
    }
}
