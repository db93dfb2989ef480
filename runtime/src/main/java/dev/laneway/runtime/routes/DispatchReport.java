package dev.laneway.runtime.routes;

import dev.laneway.spi.Route;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Which route serves a model directory, and every route's verdict on the way there.
 *
 * @param dir      the model directory
 * @param shape    a one-line description of what the directory holds
 * @param verdicts each route's answer, in the order asked
 * @param serving  the route that serves, if any
 * @param refusal  why nothing serves, if so: a fatal decline or refusal, or no claim at all
 */
public record DispatchReport(Path dir, String shape, List<Verdict> verdicts, Optional<Route> serving,
                             Optional<String> refusal) {
    public DispatchReport {
        verdicts = List.copyOf(verdicts);
        if (serving.isPresent() == refusal.isPresent()) {
            throw new IllegalArgumentException("a dispatch either serves or is refused");
        }
    }

    /** The route that serves, or the refusal as an exception. */
    public Route servingOrThrow() throws DispatchException {
        return serving.orElseThrow(() -> new DispatchException(refusal.orElseThrow()));
    }

    /** The verdicts of optional routes that stepped aside, to be logged at start-up. */
    public List<Verdict> declines() {
        return verdicts.stream().filter(v -> v.kind() == Verdict.Kind.DECLINED).toList();
    }
}
