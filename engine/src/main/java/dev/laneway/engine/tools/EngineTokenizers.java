package dev.laneway.engine.tools;

import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.TokenCodec;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/** The tokenizer of a container directory, a GGUF file (vocabulary-only ones included) or a tokenizer.json. */
public final class EngineTokenizers implements dev.laneway.spi.TokenizerLoader {

    @Override
    public Optional<TokenCodec> load(Path path) throws IOException {
        return Optional.of(TokenizerLoader.load(path));
    }
}
