package dev.laneway.engine.grammar;

/**
 * The vocabulary the grammar fuzz tests check grammars against: the 256 single bytes, and an end-of-text token. Each
 * check gets {@link Grammars} of its own, so that no automaton kept from an earlier input spares it any work.
 */
final class FuzzVocabulary {
    static final int END = 256;

    private FuzzVocabulary() {
    }

    static Grammars grammars() {
        return new Grammars(256, b -> new byte[] {(byte) b}, new int[] {END}, END + 1);
    }
}
