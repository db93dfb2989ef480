package dev.laneway.runtime.serve;

import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.spi.RouteOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * One model the server can serve: where it is, the names requests give it (its id first), the route options it is
 * opened with, and how long it stays loaded.
 *
 * @param keepAlive     how long it stays loaded once idle; empty: the server's {@code --sleep-idle-seconds}
 * @param pinned        never unloaded to make room for another model, nor when idle
 * @param loadOnStartup loaded when the server starts rather than when a request first names it
 */
public record ModelSpec(List<String> names, Path path, RouteOptions options, Optional<Duration> keepAlive,
                        boolean pinned, boolean loadOnStartup, List<String> tags) {

    public ModelSpec {
        names = List.copyOf(names);
        tags = List.copyOf(tags);
        options = options.withAlias(names.get(0));
    }

    /** The id requests and answers know it by. */
    public String id() {
        return names.get(0);
    }

    /**
     * The name the model at {@code path} has unless it is given one: a GGUF file's stem, or its folder's name (a
     * {@code model.q4nx} file's folder).
     */
    static String defaultName(Path path) {
        Path p = path.toAbsolutePath().normalize();
        if (p.getFileName().toString().equals(ModelLocator.CONTAINER_WEIGHTS) && p.getParent() != null) {
            p = p.getParent();
        }
        return new ModelLocator.Packable(p).stem();
    }

    /**
     * What its files take, in bytes: the measure of the memory budget (the weights are mapped from them, and a
     * packed GGUF's container is read in their place).
     */
    public long bytes() {
        try {
            if (!Files.exists(path)) {
                return 0;  // it is refused by name when it loads
            }
            if (Files.isRegularFile(path)) {
                return Files.size(path);
            }
            try (Stream<Path> files = Files.walk(path, 2)) {
                return files.filter(Files::isRegularFile).mapToLong(f -> {
                    try {
                        return Files.size(f);
                    } catch (IOException e) {
                        return 0;
                    }
                }).sum();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot measure " + path, e);
        }
    }
}
