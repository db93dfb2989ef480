package dev.laneway.runtime.routes;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a {@code -m} argument points at (docs/routes.md): a model directory, a {@code model.q4nx} file (meaning its
 * directory), or a source that is packed into a cached container before it is served: a {@code .gguf} file or a
 * Hugging Face checkpoint directory ({@code config.json}, {@code tokenizer.json}, safetensors, no {@code model.q4nx}).
 */
public final class ModelLocator {
    /** The file name of a container's weights. */
    public static final String CONTAINER_WEIGHTS = "model.q4nx";

    private ModelLocator() {
    }

    /** A located model. */
    public sealed interface Located {
    }

    /** A directory to dispatch as it is. */
    public record Directory(Path dir) implements Located {
    }

    /** A GGUF file or a Hugging Face checkpoint directory, to pack first. */
    public record Packable(Path path) implements Located {
        /** The file name without {@code .gguf}, or the directory's name: the model's id unless an alias is given. */
        public String stem() {
            return path.getFileName().toString().replaceFirst("(?i)\\.gguf$", "");
        }
    }

    /** The options with the model id defaulted: a GGUF file is known by its stem, not by its cache directory. */
    public static dev.laneway.spi.RouteOptions withDefaultAlias(Located located, dev.laneway.spi.RouteOptions options) {
        if (options.alias().isEmpty() && located instanceof Packable g) {
            return options.withAlias(g.stem());
        }
        return options;
    }

    /** Whether a directory is a Hugging Face checkpoint rather than a container. */
    static boolean isCheckpoint(Path dir) {
        return !Files.exists(dir.resolve(CONTAINER_WEIGHTS)) && Files.isRegularFile(dir.resolve("config.json"))
                && Files.isRegularFile(dir.resolve("tokenizer.json"))
                && (Files.isRegularFile(dir.resolve("model.safetensors"))
                || Files.isRegularFile(dir.resolve("model.safetensors.index.json")));
    }

    /**
     * Locates a model path.
     *
     * @throws IllegalArgumentException naming the path and what is wrong with it
     */
    public static Located locate(Path path) {
        Path p = path.toAbsolutePath().normalize();
        if (!Files.exists(p)) {
            throw new IllegalArgumentException("model path does not exist: " + path);
        }
        if (Files.isDirectory(p)) {
            return isCheckpoint(p) ? new Packable(p) : new Directory(p);
        }
        String name = p.getFileName().toString();
        if (name.equals(CONTAINER_WEIGHTS)) {
            return new Directory(p.getParent());
        }
        if (name.toLowerCase(java.util.Locale.ROOT).endsWith(".gguf")) {
            if (!Files.isReadable(p)) {
                throw new IllegalArgumentException("model file is not readable: " + path);
            }
            return new Packable(p);
        }
        throw new IllegalArgumentException("model path " + path
                + " is neither a model directory, a .gguf file nor a " + CONTAINER_WEIGHTS + " file");
    }
}
