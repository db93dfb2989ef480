package dev.laneway.engine.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The shared test data beside the checkout: real models, tokenizer vectors and llama.cpp's reference outputs. Tests
 * fail loudly when it is missing rather than skip.
 */
public final class Shared {
    private Shared() {
    }

    /** The shared directory ({@code -Dshared.dir}, else {@code ../shared} from the checkout root). */
    public static Path dir() {
        String configured = System.getProperty("shared.dir");
        Path dir = configured != null ? Path.of(configured) : Path.of("..", "shared");
        if (!Files.isDirectory(dir.resolve("models"))) {
            throw new IllegalStateException("the shared test data is missing: expected models/ under "
                    + dir.toAbsolutePath().normalize() + " (set -Dshared.dir)");
        }
        return dir.toAbsolutePath().normalize();
    }

    /** A path under {@code shared/models}, which must exist. */
    public static Path model(String relative) {
        return existing(dir().resolve("models").resolve(relative));
    }

    /** A path under {@code shared/golden}, which must exist. */
    public static Path golden(String relative) {
        return existing(dir().resolve("golden").resolve(relative));
    }

    public static Path stories260kGguf() {
        return model("stories260K/stories260K.gguf");
    }

    public static Path tinystoriesCheckpoint() {
        return model("tinystories-656k");
    }

    private static Path existing(Path p) {
        if (!Files.exists(p)) {
            throw new IllegalStateException("shared test data missing: " + p);
        }
        return p;
    }
}
