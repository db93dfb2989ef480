package dev.laneway.spi;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Loads the tokenizer of a model directory or file, weights or not (a vocabulary-only GGUF file has none), for
 * {@code ./laneway tokenize}. Found through {@link java.util.ServiceLoader}.
 */
public interface TokenizerLoader {

    /** The tokenizer of {@code path}, or empty when this loader does not read it. */
    Optional<TokenCodec> load(Path path) throws IOException;
}
