package dev.laneway.engine.lane;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * How a {@link ChaosDevice} misbehaves. Each knob reproduces a failure seen on accelerators in the field.
 *
 * @param faultProbability chance that any run times out ({@code p})
 * @param seed             seed of those draws ({@code seed})
 * @param idleTimeout      a context idle longer than this fails its next run with a timeout ({@code idle_ms}); zero: never
 * @param stuckFor         after such a timeout the whole device stays stuck this long, failing every run of every
 *                         context ({@code stuck_ms})
 * @param failAt           positions and layers at which a run times out once, as {@code position:layer}
 *                         ({@code fail_at=10:3,20:0})
 * @param initHangs        init runs never complete ({@code init_hang=1})
 * @param abortThrows      {@code abort} throws ({@code abort_throws=1})
 * @param loadTimeouts     runs time out while more than one context is live ({@code load_timeouts=1})
 * @param hangAt           positions and layers at which a run hangs once, until its context is aborted
 *                         ({@code hang_at=10:3}): a device that stops answering without an error
 * @param exclusive        the device allows one context at a time in a process ({@code exclusive=1}), as some
 *                         accelerators do
 */
public record ChaosConfig(double faultProbability, long seed, Duration idleTimeout, Duration stuckFor,
                          Set<String> failAt, boolean initHangs, boolean abortThrows, boolean loadTimeouts,
                          Set<String> hangAt, boolean exclusive) {

    public ChaosConfig {
        if (!(faultProbability >= 0 && faultProbability <= 1)) {
            throw new IllegalArgumentException("chaos p must be between 0 and 1, was " + faultProbability);
        }
        failAt = Set.copyOf(failAt);
        hangAt = Set.copyOf(hangAt);
    }

    /** No faults at all. */
    public static ChaosConfig none() {
        return new ChaosConfig(0, 1, Duration.ZERO, Duration.ZERO, Set.of(), false, false, false, Set.of(), false);
    }

    public ChaosConfig withFaultProbability(double p, long seed) {
        return new ChaosConfig(p, seed, idleTimeout, stuckFor, 
                failAt, initHangs, abortThrows, loadTimeouts, hangAt, exclusive);
    }

    public ChaosConfig withIdleTimeout(Duration idle, Duration stuck) {
        return new ChaosConfig(faultProbability, seed, idle, stuck, 
                failAt, initHangs, abortThrows, loadTimeouts, hangAt, exclusive);
    }

    public ChaosConfig withFailAt(int position, int layer) {
        Set<String> more = new java.util.HashSet<>(failAt);
        more.add(position + ":" + layer);
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, more, initHangs, abortThrows,
                loadTimeouts, hangAt, exclusive);
    }

    public ChaosConfig withHangAt(int position, int layer) {
        Set<String> more = new java.util.HashSet<>(hangAt);
        more.add(position + ":" + layer);
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, failAt, initHangs, abortThrows,
                loadTimeouts, more, exclusive);
    }

    public ChaosConfig withExclusive(boolean oneContext) {
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, failAt, initHangs, abortThrows,
                loadTimeouts, hangAt, oneContext);
    }

    public ChaosConfig withInitHangs(boolean hangs) {
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, 
                failAt, hangs, abortThrows, loadTimeouts, hangAt, exclusive);
    }

    public ChaosConfig withAbortThrows(boolean throwsOnAbort) {
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, 
                failAt, initHangs, throwsOnAbort, loadTimeouts, hangAt, exclusive);
    }

    public ChaosConfig withLoadTimeouts(boolean underLoad) {
        return new ChaosConfig(faultProbability, seed, idleTimeout, stuckFor, 
                failAt, initHangs, abortThrows, underLoad, hangAt, exclusive);
    }

    /**
     * Parses the query of a {@code chaos:DEVICE?KEY=VALUE&...} device name.
     *
     * @throws IllegalArgumentException naming the key that is unknown or malformed
     */
    public static ChaosConfig parse(String query) {
        ChaosConfig c = none();
        for (Map.Entry<String, String> e : pairs(query).entrySet()) {
            String v = e.getValue();
            try {
                c = switch (e.getKey()) {
                    case "p" -> c.withFaultProbability(Double.parseDouble(v), c.seed);
                    case "seed" -> c.withFaultProbability(c.faultProbability, Long.parseLong(v));
                    case "idle_ms" -> c.withIdleTimeout(Duration.ofMillis(Long.parseLong(v)), c.stuckFor);
                    case "stuck_ms" -> c.withIdleTimeout(c.idleTimeout, Duration.ofMillis(Long.parseLong(v)));
                    case "fail_at", "hang_at" -> {
                        ChaosConfig more = c;
                        for (String at : v.split(",")) {
                            String[] pl = at.split(":");
                            int position = Integer.parseInt(pl[0]);
                            int layer = Integer.parseInt(pl[1]);
                            more = e.getKey().equals("fail_at") ? more.withFailAt(position, layer)
                                    : more.withHangAt(position, layer);
                        }
                        yield more;
                    }
                    case "exclusive" -> c.withExclusive(flag(v));
                    case "init_hang" -> c.withInitHangs(flag(v));
                    case "abort_throws" -> c.withAbortThrows(flag(v));
                    case "load_timeouts" -> c.withLoadTimeouts(flag(v));
                    default -> throw new IllegalArgumentException("unknown chaos knob '" + e.getKey()
                            + "' (known: p, seed, idle_ms, stuck_ms, fail_at, hang_at, init_hang, abort_throws, load_timeouts, exclusive)");
                };
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException ex) {
                throw new IllegalArgumentException("chaos knob " + e.getKey() + "=" + v + " is malformed");
            }
        }
        return c;
    }

    private static boolean flag(String v) {
        return v.equals("1") || v.equalsIgnoreCase("true");
    }

    private static Map<String, String> pairs(String query) {
        Map<String, String> pairs = new LinkedHashMap<>();
        if (query == null || query.isEmpty()) {
            return pairs;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("chaos knob '" + pair + "' must be KEY=VALUE");
            }
            pairs.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return pairs;
    }
}
