package dev.laneway.runtime.serve;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long a model stays loaded once no request uses it, written as Ollama's {@code keep_alive} is: seconds, or a
 * duration as Go writes it ({@code "5m"}, {@code "1h30m"}, {@code "0"}); negative keeps it loaded until the server
 * stops, and is returned as -1 s.
 */
public final class KeepAlive {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

    private KeepAlive() {
    }

    /** The duration that {@code text} writes; empty when it is no duration. */
    public static Optional<Duration> parse(String text) {
        String t = text.trim();
        boolean negative = t.startsWith("-");
        String body = negative || t.startsWith("+") ? t.substring(1) : t;
        if (body.matches("\\d+")) {
            return Optional.of(negative ? Duration.ofSeconds(-1) : Duration.ofSeconds(Long.parseLong(body)));
        }
        Matcher m = PART.matcher(body);
        double nanos = 0;
        int end = 0;
        while (m.find() && m.start() == end) {
            nanos += Double.parseDouble(m.group(1)) * switch (m.group(2)) {
                case "ns" -> 1;
                case "us", "µs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
            };
            end = m.end();
        }
        if (body.isEmpty() || end != body.length()) {
            return Optional.empty();
        }
        return Optional.of(negative ? Duration.ofSeconds(-1) : Duration.ofNanos((long) nanos));
    }

    /** A number of seconds; negative: -1 s. */
    public static Duration ofSeconds(double seconds) {
        return seconds < 0 ? Duration.ofSeconds(-1) : Duration.ofNanos((long) (seconds * 1e9));
    }
}
