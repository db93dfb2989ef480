package dev.laneway.engine.tokenizer;

import dev.laneway.engine.testing.LlamaCppModels;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llama.cpp's tokenizer vectors: each vocabulary-only GGUF, converted to a Hugging Face tokenizer, must give the ids
 * of its {@code .out} file for every string of its {@code .inp} file (no special tokens), and decode them back to the
 * string where llama.cpp's decoding does.
 */
class VocabVectorsTest {

    /**
     * @param vocab        the name in {@code ggml-vocab-NAME.gguf}
     * @param roundTrips   how many of the 46 strings decode back to themselves: all of them, except for WordPiece,
     *                     which lower-cases, strips accents, maps unknown words to [UNK] and spaces out punctuation
     *                     (as BERT's decoding, and llama.cpp's, do)
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "llama-spm, 46",
            "phi-3, 46",
            "gpt-2, 46",
            "deepseek-coder, 46",
            "falcon, 46",
            "bert-bge, 14",
    })
    void encodesEveryTestStringToLlamaCppIds(String vocab, int roundTrips) throws Exception {
        Path gguf = Shared.model("vocab/ggml-vocab-" + vocab + ".gguf");
        List<String> inputs = VocabTestFile.splitInputs(Files.readString(Path.of(gguf + ".inp")));
        List<int[]> expected = VocabTestFile.parseOutputs(Files.readString(Path.of(gguf + ".out")));
        assertEquals(46, inputs.size(), "strings in the .inp file");
        assertEquals(inputs.size(), expected.size(), "lines in the .out file");
        List<String> mismatches = new ArrayList<>();
        int decodedBack = 0;
        try (TextTokenizer tokenizer = TokenizerLoader.load(gguf)) {
            for (int i = 0; i < inputs.size(); i++) {
                int[] ids = tokenizer.encode(inputs.get(i), false, false);
                if (!Arrays.equals(ids, expected.get(i))) {
                    mismatches.add("#" + i + " " + quote(inputs.get(i)) + ": got" + VocabTestFile.formatIds(ids)
                            + ", expected" + VocabTestFile.formatIds(expected.get(i)));
                }
                if (tokenizer.detokenize(expected.get(i)).equals(inputs.get(i))) {
                    decodedBack++;
                }
            }
        }
        assertEquals(List.of(), mismatches, vocab + ": strings whose ids differ from llama.cpp's");
        assertEquals(roundTrips, decodedBack, vocab + ": strings that decode back to themselves");
    }

    /**
     * Every vocabulary of llama.cpp's {@code models} directory that has test vectors gives their ids, or is refused by
     * name when its tokenizer is one Laneway does not implement (the one listed here: a refusal anywhere else, or
     * that one loading, fails).
     */
    @Test
    void everyLlamaCppVocabularyGivesItsIdsOrIsRefusedByName() throws Exception {
        Map<String, String> refused = Map.of("gemma-4", "tokenizer.ggml.model 'gemma4' is not supported");
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (Path gguf : LlamaCppModels.vocabularies()) {
            String name = gguf.getFileName().toString().replace("ggml-vocab-", "").replace(".gguf", "");
            List<String> inputs = VocabTestFile.splitInputs(Files.readString(Path.of(gguf + ".inp")));
            List<int[]> expected = VocabTestFile.parseOutputs(Files.readString(Path.of(gguf + ".out")));
            try (TextTokenizer tokenizer = TokenizerLoader.load(gguf)) {
                if (refused.containsKey(name)) {
                    failures.add(name + " loaded, though it was expected to be refused");
                    continue;
                }
                for (int i = 0; i < inputs.size(); i++) {
                    int[] ids = tokenizer.encode(inputs.get(i), false, false);
                    if (!Arrays.equals(ids, expected.get(i))) {
                        failures.add(name + " #" + i + " " + quote(inputs.get(i)) + ": got" + VocabTestFile.formatIds(ids)
                                + ", expected" + VocabTestFile.formatIds(expected.get(i)));
                    }
                }
                checked++;
            } catch (Exception e) {
                if (!refused.containsKey(name) || !String.valueOf(e.getMessage()).contains(refused.get(name))) {
                    failures.add(name + " failed to load: " + e.getMessage());
                }
            }
        }
        assertEquals(List.of(), failures);
        assertTrue(checked >= 14, "vocabularies checked: " + checked);
    }

    private static String quote(String s) {
        return "\"" + s.replace("\n", "\\n").replace("\t", "\\t") + "\"";
    }
}
