package dev.laneway.engine.grammar;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A grammar run as a byte automaton, built lazily as generations explore it, and the token masks of its states.
 *
 * <p>A matcher configuration is the set of pushdown stacks the grammar may be in (as llama.cpp keeps them): each stack
 * a chain of positions whose top is the character element to match next. Stacks are hash-consed ({@link Frame}) and
 * sets of them interned ({@link State}), so equal configurations are one object. Bytes drive it: a {@link Node} is a
 * state plus the leading bytes of a code point not yet complete, and each node remembers where every byte leads. A
 * state's token mask is one walk over the {@link TokenTrie} that stops at every refused prefix; it is kept, so a
 * generation that comes back to a state (inside a string, between properties) pays for it once. Generations share
 * the automaton of the same grammar; its methods are synchronized.
 */
final class GrammarAutomaton {
    /** Beyond this many kept masks, masks are computed again each time instead of kept (memory stays bounded). */
    private static final int MAX_MASKS = 4096;

    private final Grammar grammar;
    private final TokenTrie trie;
    private final int[] endOfText;
    private final int maskWords;
    private final Map<FrameKey, Frame> frames = new HashMap<>();
    private final Map<StateKey, State> states = new HashMap<>();
    private final Map<PartialKey, Node> partials = new HashMap<>();
    private final Node start;
    private int masks;

    /** The dead end: no byte leads anywhere from it. */
    static final Node DEAD = new Node(null, 0, 0, 0);

    GrammarAutomaton(Grammar grammar, TokenTrie trie, int[] endOfText, int logitsVocab) {
        this.grammar = grammar;
        this.trie = trie;
        this.endOfText = endOfText.clone();
        this.maskWords = (logitsVocab + 63) >>> 6;
        Set<Frame> initial = new LinkedHashSet<>();
        boolean[] accepting = new boolean[1];
        Set<FrameKey> seen = new HashSet<>();
        for (int alt : grammar.alternatives(grammar.root())) {
            expand(alt, null, initial, accepting, seen);
        }
        this.start = nodeOf(state(initial, accepting[0]));
    }

    Node start() {
        return start;
    }

    /** Where token {@code t} leads from {@code n}: {@link #DEAD} when the grammar refuses it. */
    synchronized Node afterToken(Node n, int t) {
        byte[] b = trie.bytes(t);
        if (b == null) {
            return DEAD;
        }
        for (int i = 0; i < b.length && n != DEAD; i++) {
            n = step(n, b[i] & 0xFF);
        }
        return n;
    }

    /** Whether the text so far is a whole sentence of the grammar (the end of text may come now). */
    static boolean accepting(Node n) {
        return n != DEAD && n.remaining == 0 && n.state.accepting;
    }

    /** Whether nothing but the end of text can follow. */
    static boolean complete(Node n) {
        return accepting(n) && n.state.stacks.length == 0;
    }

    /**
     * The tokens allowed at {@code n}, one bit per token id: those whose bytes keep the text a prefix of the grammar's
     * language, and the end-of-text tokens when the text is already a sentence.
     */
    synchronized long[] mask(Node n) {
        if (n.mask != null) {
            return n.mask;
        }
        long[] mask = new long[maskWords];
        Node[] at = new Node[trie.maxDepth + 1];
        at[0] = n;
        byte[] label = trie.label;
        int[] depth = trie.depth;
        int[] count = trie.count;
        int size = trie.size();
        for (int i = 1; i < size; ) {
            Node next = step(at[depth[i] - 1], label[i] & 0xFF);
            if (next == DEAD) {
                i = trie.end[i];
                continue;
            }
            at[depth[i]] = next;
            for (int k = 0, f = trie.first[i]; k < count[i]; k++) {
                int t = trie.tokens[f + k];
                mask[t >>> 6] |= 1L << t;
            }
            i++;
        }
        if (accepting(n)) {
            for (int t : endOfText) {
                if (t >>> 6 < mask.length) {
                    mask[t >>> 6] |= 1L << t;
                }
            }
        }
        if (masks < MAX_MASKS) {
            masks++;
            n.mask = mask;
        }
        return mask;
    }

    private Node step(Node n, int b) {
        Node x = n.next[b];
        if (x == null) {
            x = computeStep(n, b);
            n.next[b] = x;
        }
        return x;
    }

    private Node computeStep(Node n, int b) {
        int partial;
        int remaining;
        int lowest;
        if (n.remaining == 0) {
            if (b < 0x80) {
                return nodeOf(advance(n.state, b));
            } else if ((b & 0xE0) == 0xC0) {
                partial = b & 0x1F;
                remaining = 1;
                lowest = 0x80;
            } else if ((b & 0xF0) == 0xE0) {
                partial = b & 0x0F;
                remaining = 2;
                lowest = 0x800;
            } else if ((b & 0xF8) == 0xF0) {
                partial = b & 0x07;
                remaining = 3;
                lowest = 0x10000;
            } else {
                return DEAD;
            }
        } else {
            if ((b & 0xC0) != 0x80) {
                return DEAD;
            }
            partial = (n.partial << 6) | (b & 0x3F);
            remaining = n.remaining - 1;
            lowest = n.lowest;
            if (remaining == 0) {
                // Overlong forms and surrogates are not UTF-8.
                boolean valid = partial >= lowest && partial <= Character.MAX_CODE_POINT
                        && (partial < 0xD800 || partial > 0xDFFF);
                return valid ? nodeOf(advance(n.state, partial)) : DEAD;
            }
        }
        // A code point begun: go on only if some stack takes one the bytes so far can still become.
        int lo = Math.max(lowest, partial << (6 * remaining));
        int hi = Math.min(Character.MAX_CODE_POINT, (partial << (6 * remaining)) | ((1 << (6 * remaining)) - 1));
        if (lo > hi) {
            return DEAD;
        }
        boolean possible = false;
        for (Frame f : n.state.stacks) {
            if (grammar.matchesSomeOf(f.pos, lo, hi)) {
                possible = true;
                break;
            }
        }
        if (!possible) {
            return DEAD;
        }
        return partials.computeIfAbsent(new PartialKey(n.state, partial, remaining, lowest),
                k -> new Node(k.state, k.partial, k.remaining, k.lowest));
    }

    private Node nodeOf(State s) {
        if (s.stacks.length == 0 && !s.accepting) {
            return DEAD;
        }
        if (s.node == null) {
            s.node = new Node(s, 0, 0, 0);
        }
        return s.node;
    }

    /** The configuration after code point {@code cp}. */
    private State advance(State s, int cp) {
        Set<Frame> out = new LinkedHashSet<>();
        boolean[] accepting = new boolean[1];
        Set<FrameKey> seen = new HashSet<>();
        for (Frame f : s.stacks) {
            if (grammar.matches(f.pos, cp)) {
                expand(grammar.next(f.pos), f.below, out, accepting, seen);
            }
        }
        return state(out, accepting[0]);
    }

    /**
     * Adds the stacks that continue at {@code pos} above {@code below}, expanded until each top is a character
     * element; an alternative's end returns to the stack below, and the end of the whole grammar makes it accepting.
     * Depth first, on a stack of its own, and each (position, stack below) once: nullable rules in a row would
     * otherwise be followed down every combination of their alternatives, and deep on the thread's stack.
     */
    private void expand(int pos, Frame below, Set<Frame> out, boolean[] accepting, Set<FrameKey> seen) {
        Deque<FrameKey> work = new ArrayDeque<>();
        work.push(new FrameKey(pos, below));
        while (!work.isEmpty()) {
            FrameKey at = work.pop();
            if (!seen.add(at)) {
                continue;
            }
            switch (grammar.kind(at.pos())) {
                case Grammar.END -> {
                    if (at.below() == null) {
                        accepting[0] = true;
                    } else {
                        work.push(new FrameKey(at.below().pos, at.below().below));
                    }
                }
                case Grammar.REF -> {
                    int after = grammar.next(at.pos());
                    // A reference that ends its alternative needs no return position (the repetitions stay flat).
                    Frame returnTo = grammar.kind(after) == Grammar.END ? at.below() : frame(after, at.below());
                    int[] alternatives = grammar.alternatives(grammar.rule(at.pos()));
                    for (int i = alternatives.length - 1; i >= 0; i--) {
                        work.push(new FrameKey(alternatives[i], returnTo));
                    }
                }
                default -> out.add(frame(at.pos(), at.below()));
            }
        }
    }

    private Frame frame(int pos, Frame below) {
        return frames.computeIfAbsent(new FrameKey(pos, below), k -> new Frame(k.pos, k.below, frames.size()));
    }

    private State state(Set<Frame> stacks, boolean accepting) {
        Frame[] sorted = stacks.toArray(new Frame[0]);
        Arrays.sort(sorted, (a, b) -> Integer.compare(a.id, b.id));
        int[] ids = new int[sorted.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = sorted[i].id;
        }
        return states.computeIfAbsent(new StateKey(ids, accepting), k -> new State(sorted, accepting));
    }

    /** One pushdown stack: the element to match next, over the stack to return to (null: the grammar's end). */
    private static final class Frame {
        final int pos;
        final Frame below;
        final int id;

        Frame(int pos, Frame below, int id) {
            this.pos = pos;
            this.below = below;
            this.id = id;
        }
    }

    /** Frames are equal when their positions are and they sit on the same (interned) frame. */
    private record FrameKey(int pos, Frame below) {
    }

    private record StateKey(int[] ids, boolean accepting) {
        @Override
        public boolean equals(Object o) {
            return o instanceof StateKey k && k.accepting == accepting && Arrays.equals(k.ids, ids);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(ids) * 2 + (accepting ? 1 : 0);
        }
    }

    private record PartialKey(State state, int partial, int remaining, int lowest) {
    }

    /** A set of stacks; accepting when the grammar may end here. */
    private static final class State {
        final Frame[] stacks;
        final boolean accepting;
        Node node;

        State(Frame[] stacks, boolean accepting) {
            this.stacks = stacks;
            this.accepting = accepting;
        }
    }

    /**
     * A state and the leading bits of a code point still {@code remaining} continuation bytes short, which must come
     * to at least {@code lowest} (the smallest code point of its length in UTF-8).
     */
    static final class Node {
        final State state;
        final int partial;
        final int remaining;
        final int lowest;
        final Node[] next = new Node[256];
        long[] mask;

        Node(State state, int partial, int remaining, int lowest) {
            this.state = state;
            this.partial = partial;
            this.remaining = remaining;
            this.lowest = lowest;
        }
    }
}
