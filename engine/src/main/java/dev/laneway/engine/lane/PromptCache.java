package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.engine.kernels.KvCache;

import java.util.Iterator;
import java.util.LinkedList;

/**
 * What streams' KV caches held before a new prompt overwrote most of it, kept in host memory up to a budget
 * (llama-server's {@code --cache-ram}): a later prompt that begins as one of them more than as any free stream's cache has that prefix
 * copied back into its stream instead of computing it again. So more conversations stay cached than there are
 * streams. The least recently used entry goes first when the budget is full, and a stored prefix of what is stored
 * again is dropped. Used by the engine loop's thread only.
 */
final class PromptCache {
    private final long budget;
    /** Least recently used first. */
    private final LinkedList<Entry> entries = new LinkedList<>();
    private long bytes;
    private long restoredTokens;

    /** A stream's tokens under a cache salt, and their keys and values per layer. */
    private record Entry(String salt, int[] tokens, Object[] keys, Object[] values, long bytes) {
    }

    /** @param budget the most bytes of keys and values kept */
    PromptCache(long budget) {
        this.budget = budget;
    }

    /**
     * Keeps what {@code slot} holds under cache salt {@code salt}, its cache being about to be overwritten, unless an
     * entry holds it already (one that begins with it); the entries it begins with are dropped.
     */
    void keep(KvCache kv, CachedTokens held, int slot, String salt) {
        int n = held.length();
        int[] tokens = held.tokens();
        for (Iterator<Entry> it = entries.iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (!e.salt.equals(salt)) {
                continue;
            }
            if (e.tokens.length >= n && common(e.tokens, tokens, n) == n) {
                return;
            }
            if (common(e.tokens, tokens, e.tokens.length) == e.tokens.length) {
                it.remove();
                bytes -= e.bytes;
            }
        }
        long size = 2L * kv.layers() * kv.precision().bytes((long) n * kv.kvDim());
        if (n == 0 || size > budget || !heapHolds(size)) {
            return;
        }
        while (bytes + size > budget) {
            bytes -= entries.removeFirst().bytes;
        }
        Object[] keys = new Object[kv.layers()];
        Object[] values = new Object[kv.layers()];
        int elements = n * kv.kvDim();
        for (int l = 0; l < kv.layers(); l++) {
            KvCache.Layer layer = kv.layer(l);
            int base = layer.index(layer.base(slot));
            keys[l] = copyOf(layer.keyArray(), base, layer.index(elements));
            values[l] = copyOf(layer.valueArray(), base, layer.index(elements));
        }
        entries.addLast(new Entry(salt, tokens, keys, values, size));
        bytes += size;
    }

    /**
     * Copies back into {@code slot} the kept prefix of {@code prompt} under {@code salt}, when it is longer than the
     * {@code reusable} positions the slot serves already; the prompt's last token is never taken, so that its logits
     * are computed. Returns the positions the slot now serves.
     */
    int restore(KvCache kv, CachedTokens held, int slot, String salt, int[] prompt, int reusable) {
        Entry best = null;
        int longest = reusable;
        for (Entry e : entries) {
            int n = e.salt.equals(salt) ? common(e.tokens, prompt, Math.min(e.tokens.length, prompt.length - 1)) : 0;
            if (n > longest) {
                longest = n;
                best = e;
            }
        }
        if (best == null) {
            return reusable;
        }
        kv.reserve(longest);
        int elements = longest * kv.kvDim();
        for (int l = 0; l < kv.layers(); l++) {
            KvCache.Layer layer = kv.layer(l);
            int base = layer.index(layer.base(slot));
            System.arraycopy(best.keys[l], 0, layer.keyArray(), base, layer.index(elements));
            System.arraycopy(best.values[l], 0, layer.valueArray(), base, layer.index(elements));
        }
        held.clear();
        held.keep(0, salt);
        held.append(best.tokens, 0, longest);
        entries.remove(best);
        if (longest == best.tokens.length) {
            bytes -= best.bytes;  // the slot holds all of it now, and keeps it again when overwritten
        } else {
            entries.addLast(best);
        }
        restoredTokens += longest;
        return longest;
    }

    /** What the cache holds now, and the prompt tokens it has served. */
    record Stats(int entries, long bytes, long restoredTokens) {
    }

    Stats stats() {
        return new Stats(entries.size(), bytes, restoredTokens);
    }

    private static int common(int[] a, int[] b, int max) {
        int n = Math.min(max, Math.min(a.length, b.length));
        int i = 0;
        while (i < n && a[i] == b[i]) {
            i++;
        }
        return i;
    }

    private static Object copyOf(Object array, int from, int n) {
        Object copy = java.lang.reflect.Array.newInstance(array.getClass().getComponentType(), n);
        System.arraycopy(array, from, copy, 0, n);
        return copy;
    }

    /** Whether the heap keeps an eighth of itself free after {@code size} more bytes: the cache never starves it. */
    private static boolean heapHolds(long size) {
        Runtime heap = Runtime.getRuntime();
        long free = heap.maxMemory() - (heap.totalMemory() - heap.freeMemory());
        return free - size > heap.maxMemory() / 8;
    }
}
