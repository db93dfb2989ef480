package dev.laneway.engine.lane;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What was in flight when a device failed a generation.
 *
 * @param at         when
 * @param device     the device's name
 * @param contextId  the context that failed
 * @param kernel     the kernel in flight
 * @param layer      its layer, or -1
 * @param position   the position it computed, or -1
 * @param elapsed    how long the run took before it failed
 * @param deadline   the run's deadline
 * @param args       its buffers: name, size in bytes and a digest of the first bytes
 * @param contextAge how old the context was
 * @param idleFor    how long the context had been idle before the run
 * @param fault      the device's message
 */
public record Diagnostic(Instant at, String device, long contextId, String kernel, int layer, int position,
                         Duration elapsed, Duration deadline, List<Arg> args, Duration contextAge, Duration idleFor,
                         String fault) {
    public Diagnostic {
        args = List.copyOf(args);
    }

    /**
     * A kernel argument's description.
     *
     * @param name   the buffer's name
     * @param bytes  its size
     * @param digest hex of a hash over its first bytes
     */
    public record Arg(String name, long bytes, String digest) {
    }

    /** One grep-able log line. */
    public String line() {
        return "device-fault device=" + device + " context=" + contextId + " kernel=" + kernel + " layer=" + layer
                + " position=" + position + " elapsed_ms=" + elapsed.toMillis() + " deadline_ms=" + deadline.toMillis()
                + " context_age_ms=" + contextAge.toMillis() + " idle_ms=" + idleFor.toMillis()
                + " args=[" + args.stream().map(a -> a.name + ":" + a.bytes + "B:" + a.digest)
                .collect(Collectors.joining(",")) + "] fault=\"" + fault.replace('"', '\'') + "\"";
    }

    /** The facts as strings, for health data and JSON. */
    public Map<String, Object> asMap() {
        return Map.ofEntries(
                Map.entry("at", at.toString()),
                Map.entry("device", device),
                Map.entry("context", contextId),
                Map.entry("kernel", kernel),
                Map.entry("layer", layer),
                Map.entry("position", position),
                Map.entry("elapsed_ms", elapsed.toMillis()),
                Map.entry("deadline_ms", deadline.toMillis()),
                Map.entry("context_age_ms", contextAge.toMillis()),
                Map.entry("idle_ms", idleFor.toMillis()),
                Map.entry("args", args.stream().map(a -> Map.of("name", a.name, "bytes", a.bytes, "digest", a.digest))
                        .toList()),
                Map.entry("fault", fault));
    }
}
