package dev.laneway.engine.tokenizer;

import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Encoding and decoding behaviour on the Llama 2 (SentencePiece) and GPT-2 (byte-level) vocabularies. */
class TextTokenizerTest {
    private static TextTokenizer llama;
    private static TextTokenizer gpt2;

    @BeforeAll
    static void load() throws Exception {
        llama = TokenizerLoader.load(Shared.model("vocab/ggml-vocab-llama-spm.gguf"));
        gpt2 = TokenizerLoader.load(Shared.model("vocab/ggml-vocab-gpt-2.gguf"));
    }

    @AfterAll
    static void close() {
        llama.close();
        gpt2.close();
    }

    @Test
    void emptyTextIsJustTheSpecialTokens() {
        assertArrayEquals(new int[0], llama.encode("", false, true));
        assertArrayEquals(new int[]{1}, llama.encode("", true, true));
        assertArrayEquals(new int[0], gpt2.encode("", true, true));
        assertEquals("", llama.decode(new int[0]));
        assertEquals("", llama.detokenize(new int[0]));
    }

    @Test
    void oddTextNeverFails() {
        // NUL and control characters become byte tokens; an unpaired surrogate is not Unicode and reads as U+FFFD.
        assertArrayEquals(new int[]{29871, 3, 4, 130}, llama.encode("\u0000\u0001\u007f", false, false));
        assertEquals(llama.encode("a\uFFFDb", false, false).length, llama.encode("a\uDC00b", false, false).length);
        assertEquals("a\uFFFDb", llama.detokenize(llama.encode("a\uD800b", false, false)));
        String emoji = "\uD83E\uDD99 llama";
        assertEquals(emoji, llama.detokenize(llama.encode(emoji, false, false)));
        assertEquals(emoji, gpt2.detokenize(gpt2.encode(emoji, false, false)));
        String whitespace = " \t\n\r\u00a0\u2028";
        assertEquals(whitespace, gpt2.detokenize(gpt2.encode(whitespace, false, false)));
    }

    @Test
    void longTextsEncodeWhole() {
        String text = "The quick brown fox jumps over the lazy dog; 1234567 résumé naïve. ".repeat(200);
        int[] ids = llama.encode(text, true, true);
        assertTrue(ids.length > 4000, "tokens: " + ids.length);
        assertEquals(text, llama.detokenize(Arrays.copyOfRange(ids, 1, ids.length)));
        int[] again = gpt2.encode(text, false, false);
        assertEquals(text, gpt2.decode(again));
    }

    @Test
    void specialTokenTextIsParsedOnlyWhenAsked() {
        // llama.cpp: a space goes before the text after each special token.
        assertArrayEquals(new int[]{1, 1, 15043, 2, 29871, 3186}, llama.encode("<s>Hello</s> world", true, true));
        int[] plain = llama.encode("<s>Hello</s> world", false, false);
        assertFalse(Arrays.stream(plain).anyMatch(id -> id == 1 || id == 2), Arrays.toString(plain));
        assertEquals("<s>Hello</s> world", llama.detokenize(plain));
        assertArrayEquals(new int[]{50256, 5303}, gpt2.encode("<|endoftext|>hi", false, true));
        assertArrayEquals(new int[]{27, 91, 437, 1659, 5239, 91, 29, 5303}, gpt2.encode("<|endoftext|>hi", false, false));
    }

    @Test
    void decodesTokensTheWayLlamaServerShowsThem() {
        int[] ids = llama.encode("Hello world\n", true, true);
        // Every piece as it is, the leading space and the BOS text included.
        assertEquals("<s> Hello world\n", llama.decode(ids));
        assertArrayEquals(new byte[]{'\n'}, llama.tokenBytes(13));
        assertEquals("<0x0A>", llama.tokenText(13));
        assertEquals("▁Hello", llama.tokenText(15043));
        assertArrayEquals(" Hello".getBytes(StandardCharsets.UTF_8), llama.tokenBytes(15043));
        assertTrue(llama.isSpecial(1));
        assertFalse(llama.isSpecial(15043));
        // Byte-level: "Ġworld" is " world"; a character split over tokens is split over their bytes.
        assertArrayEquals(" world".getBytes(StandardCharsets.UTF_8), gpt2.tokenBytes(995));
        int[] llamaEmoji = gpt2.encode("\uD83E\uDD99", false, false);
        assertTrue(llamaEmoji.length > 1, "the emoji spans tokens");
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int id : llamaEmoji) {
            bytes.writeBytes(gpt2.tokenBytes(id));
        }
        assertArrayEquals("\uD83E\uDD99".getBytes(StandardCharsets.UTF_8), bytes.toByteArray());
        assertEquals("<|endoftext|>", gpt2.decode(new int[]{50256}));
    }

    @Test
    void rejectsIdsOutsideTheVocabulary() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> llama.decode(new int[]{15043, 32000}));
        assertEquals("token id 32000 is not in the vocabulary (ids 0 to 31999)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> llama.detokenize(new int[]{-1}));
        assertThrows(IllegalArgumentException.class, () -> gpt2.tokenText(50257));
    }

    @Test
    void knowsItsSpecialTokens() {
        assertEquals(32000, llama.vocabSize());
        assertEquals(1, llama.bosId().orElseThrow());
        assertEquals(2, llama.eosId().orElseThrow());
        assertArrayEquals(new int[]{1}, llama.specialPrefix());
        assertArrayEquals(new int[0], llama.specialSuffix());
        assertTrue(llama.endOfGenerationIds().contains(2));
        assertEquals(50257, gpt2.vocabSize());
        assertFalse(gpt2.addsBos());
        assertTrue(gpt2.endOfGenerationIds().contains(50256));
    }
}
