package dev.laneway.engine.tokenizer;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.testing.AllocationBudget;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a model's tokenizer files ({@link HfTokenizerFiles}): what Laneway reads of them in Java,
 * {@link TokenizerJson}, the token pieces of its decoder ({@link TokenPieces}) and {@link TokenizerConfig}, either reads
 * them, every id the post-processor adds then a token of the vocabulary, or refuses them with an {@link IOException}
 * that says what is wrong (the loader reports it against the file); allocation stays in proportion to the text (a token
 * id of 2^31 - 1 must not size the vocabulary). The Hugging Face library that also reads tokenizer.json is native code,
 * outside this test.
 *
 * <p>An input is the tokenizer.json text, then optionally a NUL byte and the tokenizer_config.json text. Seeds: small
 * tokenizers of each model type (BPE, WordPiece, Unigram, SentencePiece-style BPE) as the GGUF converter writes them,
 * and the crashes fuzzing found.
 */
class TokenizerFilesFuzzTest {
    /** The id tables of a vocabulary with TokenizerJson.MAX_MISSING_IDS missing ids, and more. */
    private static final AllocationBudget BUDGET = new AllocationBudget(4 << 20, 64);

    @FuzzTest(maxDuration = "60s")
    void readAnyBytes(byte[] bytes) throws Exception {
        int nul = indexOf(bytes, (byte) 0);
        String json = new String(bytes, 0, nul < 0 ? bytes.length : nul, StandardCharsets.UTF_8);
        String config = nul < 0 ? null : new String(bytes, nul + 1, bytes.length - nul - 1, StandardCharsets.UTF_8);
        BUDGET.check(bytes.length, () -> {
            try {
                TokenizerJson tj = TokenizerJson.parse(json);
                byte[][] pieces = TokenPieces.of(tj);
                assertEquals(tj.texts.length, pieces.length);
                for (int id : concat(tj.prefix, tj.suffix)) {
                    assertTrue(id >= 0 && id < tj.texts.length && tj.texts[id] != null,
                            "the post-processor adds id " + id + ", not a token of the " + tj.texts.length);
                }
            } catch (IOException e) {
                assertNamesTheProblem(e);
            }
            if (config != null) {
                try {
                    assertNotNull(TokenizerConfig.parse(config));
                } catch (IOException e) {
                    assertNamesTheProblem(e);
                }
            }
        });
    }

    private static void assertNamesTheProblem(IOException e) {
        assertFalse(e.getMessage() == null || e.getMessage().isBlank(), e.toString());
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
