package dev.laneway.spi;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What the runtime offers a route that opens a model.
 *
 * @param cacheDir a directory the route may use for derived files that outlive the process
 */
public record RouteContext(Path cacheDir) {
    public RouteContext {
        Objects.requireNonNull(cacheDir, "cacheDir");
    }
}
