package dev.laneway.engine.tools;

import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.TokenCodec;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/** The tokenizer of a container directory, a GGUF file (vocabulary-only ones included) or a tokenizer.json. */
public final class EngineTokenizers implements dev.laneway.spi.TokenizerLoader {

    @Override
    public Optional<TokenCodec> load(Path path) throws IOException {
        TextTokenizer t = TokenizerLoader.load(path);
        return Optional.of(new TokenCodec() {
            @Override
            public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
                return t.encode(text, addSpecial, parseSpecial);
            }

            @Override
            public String decode(int[] ids) {
                return t.decode(ids);
            }
        });
    }
}
