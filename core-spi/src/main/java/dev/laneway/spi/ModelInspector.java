package dev.laneway.spi;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Describes a model file or container for {@code ./laneway inspect}: tensors, dtypes, shapes, config and tokenizer.
 * Found through {@link java.util.ServiceLoader}.
 */
public interface ModelInspector {

    /** Whether this inspector can read {@code path}. Cheap. */
    boolean reads(Path path);

    /** A human-readable report. */
    String inspect(Path path) throws IOException;
}
