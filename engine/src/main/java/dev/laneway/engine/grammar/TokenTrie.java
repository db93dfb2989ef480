package dev.laneway.engine.grammar;

import java.util.Arrays;
import java.util.Comparator;
import java.util.function.IntFunction;

/**
 * The vocabulary's token bytes as a trie, its nodes in depth-first order so that a walk is one pass over arrays: node
 * {@code i}'s subtree is {@code i .. end[i]-1}, its byte {@code label[i]}, its depth {@code depth[i]} (the root, node
 * 0, has depth 0), and the tokens spelled by the path to it are {@code tokens[first[i] .. first[i]+count[i]-1]}.
 * A grammar walk skips a subtree as soon as its prefix is refused, so a restrictive state costs little.
 */
final class TokenTrie {
    final byte[] label;
    final int[] depth;
    final int[] end;
    final int[] first;
    final int[] count;
    final int[] tokens;
    final int maxDepth;
    /** Token ids below this are the vocabulary; a mask covers them. */
    final int vocab;
    private final byte[][] bytes;

    /**
     * @param vocab       the number of token ids
     * @param tokenBytes  the bytes of each id, or null for an id that no grammar may produce (special tokens, holes)
     */
    TokenTrie(int vocab, IntFunction<byte[]> tokenBytes) {
        this.vocab = vocab;
        this.bytes = new byte[vocab][];
        int n = 0;
        long total = 0;
        for (int t = 0; t < vocab; t++) {
            byte[] b = tokenBytes.apply(t);
            if (b != null && b.length > 0) {
                bytes[t] = b;
                n++;
                total += b.length;
            }
        }
        Integer[] order = new Integer[n];
        for (int t = 0, i = 0; t < vocab; t++) {
            if (bytes[t] != null) {
                order[i++] = t;
            }
        }
        Arrays.sort(order, Comparator.comparing((Integer t) -> bytes[t], Arrays::compareUnsigned)
                .thenComparingInt(t -> t));
        int capacity = (int) Math.min(Integer.MAX_VALUE - 8, total + 1);
        byte[] lab = new byte[capacity];
        int[] dep = new int[capacity];
        int[] en = new int[capacity];
        int[] fi = new int[capacity];
        int[] co = new int[capacity];
        this.tokens = new int[n];
        int size = 1;
        int longest = 0;
        // path[d] is the node at depth d on the path to the previous token.
        int[] path = new int[1];
        int pathLength = 0;
        byte[] previous = new byte[0];
        for (int i = 0; i < n; i++) {
            int t = order[i];
            byte[] b = bytes[t];
            longest = Math.max(longest, b.length);
            if (path.length < b.length + 1) {
                path = Arrays.copyOf(path, Math.max(b.length + 1, 2 * path.length));
            }
            int common = Arrays.mismatch(previous, b);
            if (common < 0) {
                common = b.length;
            }
            for (int d = pathLength; d > common; d--) {
                en[path[d]] = size;
            }
            pathLength = Math.min(pathLength, common);
            for (int d = pathLength + 1; d <= b.length; d++) {
                lab[size] = b[d - 1];
                dep[size] = d;
                fi[size] = i;
                path[d] = size++;
            }
            pathLength = b.length;
            int node = path[b.length];
            if (co[node] == 0) {
                fi[node] = i;
            }
            co[node]++;
            tokens[i] = t;
            previous = b;
        }
        for (int d = pathLength; d > 0; d--) {
            en[path[d]] = size;
        }
        en[0] = size;
        this.label = Arrays.copyOf(lab, size);
        this.depth = Arrays.copyOf(dep, size);
        this.end = Arrays.copyOf(en, size);
        this.first = Arrays.copyOf(fi, size);
        this.count = Arrays.copyOf(co, size);
        this.maxDepth = longest;
    }

    int size() {
        return label.length;
    }

    /** The bytes of token {@code t}, or null when no grammar may produce it. */
    byte[] bytes(int t) {
        return t >= 0 && t < vocab ? bytes[t] : null;
    }
}
