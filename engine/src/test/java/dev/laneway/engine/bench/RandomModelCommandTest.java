package dev.laneway.engine.bench;

import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code bench/random-model ... --vocab}: a random model with a real tokenizer generates text pieces only, never a
 * byte, control or unused token, so that its answers read back as the same tokens (the load benchmark's multi-turn
 * conversation relies on it) and are whole UTF-8 (llama-server refuses to stream a partial character).
 */
class RandomModelCommandTest {
    @TempDir
    Path dir;

    @Test
    void aModelWithARealVocabularyGeneratesTextPiecesOnly() throws Exception {
        Path vocab = Shared.model("vocab/ggml-vocab-llama-spm.gguf");
        Path gguf = dir.resolve("spm.gguf");
        RandomModel.main(new String[] {"stories15m:1", "Q8_0", gguf.toString(), "3", "--vocab", vocab.toString()});
        GgufFile file = GgufFile.open(gguf);
        int[] types = (int[]) ((GgufArray) file.get("tokenizer.ggml.token_type").orElseThrow()).values();
        assertEquals(32000, types.length);

        Path container = dir.resolve("spm");
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.empty(), false), PackProgress.NONE);
        try (LanewayModel model = Packed.open(container, "native")) {
            int[] prompt = model.tokenize("the answer is", true, false);
            List<GeneratedToken> tokens = new ArrayList<>();
            model.generate(new GenerationRequest(prompt, 200, Sampling.GREEDY, GenerationRequest.NO_LOGPROBS, true,
                    Optional.empty()), tokens::add);
            assertEquals(200, tokens.size());
            for (GeneratedToken t : tokens) {
                assertEquals(1, types[t.id()], "token " + t.id() + " is of type " + types[t.id()] + " in "
                        + Arrays.toString(tokens.stream().mapToInt(GeneratedToken::id).toArray()));
            }
        }
    }
}
