package dev.laneway.runtime.api;

import java.util.List;

/**
 * Finds stop strings in generated text and says how much of its end must be held back because a stop string might
 * still begin there.
 */
final class StopStrings {
    private final List<String> stops;

    StopStrings(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    boolean isEmpty() {
        return stops.isEmpty();
    }

    /** Where the earliest stop string starts at or after {@code from}, or -1. */
    int find(CharSequence text, int from) {
        String s = text.toString();
        int earliest = -1;
        for (String stop : stops) {
            int at = s.indexOf(stop, from);
            if (at >= 0 && (earliest < 0 || at < earliest)) {
                earliest = at;
            }
        }
        return earliest;
    }

    /** The stop string that starts at {@code at} (the first one given, when several do). */
    String at(CharSequence text, int at) {
        String s = text.toString();
        for (String stop : stops) {
            if (s.startsWith(stop, at)) {
                return stop;
            }
        }
        throw new IllegalArgumentException("no stop string starts at " + at);
    }

    /** The length of the longest end of {@code text} that is the beginning of a stop string (and not all of it). */
    int heldBack(CharSequence text) {
        int longest = 0;
        for (String stop : stops) {
            int max = Math.min(stop.length() - 1, text.length());
            for (int len = max; len > longest; len--) {
                if (endsWithPrefix(text, stop, len)) {
                    longest = len;
                    break;
                }
            }
        }
        return longest;
    }

    private static boolean endsWithPrefix(CharSequence text, String stop, int len) {
        int start = text.length() - len;
        for (int i = 0; i < len; i++) {
            if (text.charAt(start + i) != stop.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
