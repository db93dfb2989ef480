package dev.laneway.spi;

import java.util.Set;

/** A route's answer to "is this model directory yours?". */
public sealed interface Claim permits Claim.Mine, Claim.Declined {

    /** The route will serve the directory; {@code shape} is a one-line description of what it saw. */
    static Claim mine(String shape) {
        return new Mine(shape);
    }

    /** The directory is not of a shape this route knows. */
    static Claim notMine(String reason) {
        return new Declined(reason, false, Set.of());
    }

    /** The route recognises the directory but cannot serve it (an unsupported architecture, a broken manifest). */
    static Claim cannotServe(String reason) {
        return new Declined(reason, true, Set.of());
    }

    /**
     * The route recognises the directory but steps aside because of an option, e.g. {@code --opt dx=off}. The
     * named {@code --opt} keys count as used, so the route that serves next need not know them.
     */
    static Claim steppedAside(String reason, String... optKeysUsed) {
        return new Declined(reason, true, Set.of(optKeysUsed));
    }

    /** A claim. */
    record Mine(String shape) implements Claim {
        public Mine {
            Checks.nonBlank(shape, "shape");
        }
    }

    /**
     * A decline.
     *
     * @param reason      why, in one line, naming what the route needed
     * @param recognised  whether the directory is of the route's kind at all
     * @param optKeysUsed {@code --opt} keys the route read to decline
     */
    record Declined(String reason, boolean recognised, Set<String> optKeysUsed) implements Claim {
        public Declined {
            Checks.nonBlank(reason, "reason");
            optKeysUsed = Set.copyOf(optKeysUsed);
        }
    }
}
