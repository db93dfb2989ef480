package dev.laneway.spi;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Turns a model kept in another format (a GGUF file, a Hugging Face checkpoint directory) into a Laneway container
 * directory. Found through {@link java.util.ServiceLoader}; the runtime uses it for {@code ./laneway pack} and to
 * serve a {@code .gguf} file directly.
 */
public interface ModelPacker {

    /** Whether this packer can read {@code source}. Cheap: looks at names and magic bytes only. */
    boolean reads(Path source);

    /**
     * Packs {@code source} into the directory {@code target}, which must not exist yet. The directory appears
     * complete or not at all: it is written elsewhere and renamed into place.
     *
     * @throws IOException when the source cannot be read or is not what it claims to be; the message names the file
     *                     and what was wrong
     */
    void pack(Path source, Path target, PackOptions options, PackProgress progress) throws IOException;
}
