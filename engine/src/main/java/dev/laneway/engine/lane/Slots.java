package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.spi.device.DeviceFault;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The KV cache slots of a lane and what each holds: a generation takes the free slot whose cache holds the longest
 * prefix of its prompt, else the least recently used one, so that other conversations stay cached.
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

    /** The free slot holding the longest prefix of {@code prompt}, else the least recently used one. */
    synchronized int take(int[] prompt) {
        if (free.isEmpty()) {
            throw new DeviceFault("pool", DeviceFault.Kind.UNAVAILABLE, "no free slot");
        }
        int best = free.peekFirst();
        int longest = 0;
        for (int s : free) {
            int n = cached[s].reusableFor(prompt);
            if (n > longest) {
                longest = n;
                best = s;
            }
        }
        free.remove(best);
        return best;
    }

    synchronized void give(int slot) {
        free.addLast(slot);
    }

    CachedTokens of(int slot) {
        return cached[slot];
    }
}
