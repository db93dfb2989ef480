package dev.laneway.runtime.routes;

import dev.laneway.spi.Route;

/**
 * One route's answer for one model directory, as {@code ./laneway routes} shows it.
 *
 * @param route  the route asked
 * @param kind   what it answered
 * @param reason the shape it saw (a claim) or why not (a decline)
 */
public record Verdict(Route route, Kind kind, String reason) {

    /** The possible answers. */
    public enum Kind {
        /** Claimed the directory and accepted every option: it serves. */
        SERVES("serves"),
        /** Not its kind of directory, or it cannot serve it and steps aside. */
        DECLINED("declines"),
        /** Claimed the directory but refused an option, fatally. */
        REFUSED("refuses"),
        /** Not asked, because a route before it serves. */
        NOT_ASKED("not asked");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }
}
