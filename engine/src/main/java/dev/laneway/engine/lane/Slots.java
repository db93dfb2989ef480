package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The KV cache slots of a lane and what each holds: a generation takes the free slot whose cache holds the longest
 * prefix of its prompt, else the least recently used one, so that other conversations stay cached. Used by the engine
 * loop's thread only.
 */
final class Slots {
    private final CachedTokens[] cached;
    private final Deque<Integer> free = new ArrayDeque<>();

    Slots(int n) {
        cached = new CachedTokens[n];
        for (int i = 0; i < n; i++) {
            cached[i] = new CachedTokens();
            free.add(i);
        }
    }

    boolean anyFree() {
        return !free.isEmpty();
    }

    /**
     * The free slot holding the longest prefix of {@code prompt} under cache salt {@code salt}, else the least
     * recently used one; one must be free.
     */
    int take(String salt, int[] prompt) {
        int best = free.peekFirst();
        int longest = 0;
        for (int s : free) {
            int n = cached[s].reusableFor(salt, prompt);
            if (n > longest) {
                longest = n;
                best = s;
            }
        }
        free.remove(best);
        return best;
    }

    boolean isFree(int slot) {
        return free.contains(slot);
    }

    /** Takes slot {@code slot}, which must be free. */
    int take(int slot) {
        if (!free.remove(slot)) {
            throw new IllegalStateException("slot " + slot + " is not free");
        }
        return slot;
    }

    void give(int slot) {
        free.addLast(slot);
    }

    CachedTokens of(int slot) {
        return cached[slot];
    }
}
