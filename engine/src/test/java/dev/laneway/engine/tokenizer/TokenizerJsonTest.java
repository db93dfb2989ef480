package dev.laneway.engine.tokenizer;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What Laneway reads of a tokenizer.json in Java refuses, by what is wrong, the ids and decoders it cannot use: ids
 * that would size its tables far beyond the tokens listed, ids that are not ids, post-processor tokens outside the
 * vocabulary, and decoder patterns that are not regular expressions or that backtrack without bound.
 */
class TokenizerJsonTest {
    private static String tokenizer(String vocab, String extra) {
        return "{\"added_tokens\": [{\"id\": 0, \"content\": \"[CLS]\", \"special\": true}],"
                + " \"model\": {\"type\": \"WordPiece\", \"vocab\": {" + vocab + "}}" + extra + "}";
    }

    private static String refusal(String json) {
        return assertThrows(IOException.class, () -> TokenPieces.of(TokenizerJson.parse(json))).getMessage();
    }

    @Test
    void readsIdsTheDecoderAndThePostProcessor() throws IOException {
        TokenizerJson tj = TokenizerJson.parse(tokenizer("\"[CLS]\": 0, \"a\": 1, \"##b\": 3",
                ", \"post_processor\": {\"type\": \"BertProcessing\", \"cls\": [\"[CLS]\", 0], \"sep\": [\"a\", 1]},"
                        + " \"decoder\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"#+\"}, \"content\": \"\"}"));
        assertArrayEquals(new String[] {"[CLS]", "a", null, "##b"}, tj.texts);
        assertArrayEquals(new int[] {0}, tj.prefix);
        assertArrayEquals(new int[] {1}, tj.suffix);
        assertEquals("b", new String(TokenPieces.of(tj)[3]));
    }

    @Test
    void refusesIdsFarBeyondTheTokensListed() {
        assertEquals("tokenizer.json: token id 2147483647 leaves 2147483646 ids below it without a token (the file"
                + " lists 2 tokens; at most 65536 ids may be missing)", refusal(tokenizer("\"a\": 2147483647", "")));
        assertEquals("tokenizer.json: model.vocab gives token a the id -5, expected a non-negative integer",
                refusal(tokenizer("\"a\": -5", "")));
        assertEquals("tokenizer.json: model.vocab gives token a the id \"1\", expected a non-negative integer",
                refusal(tokenizer("\"a\": \"1\"", "")));
    }

    @Test
    void refusesPostProcessorTokensOutsideTheVocabulary() {
        assertEquals("tokenizer.json: the post-processor's sep token has id 7, which is not a token of the vocabulary"
                + " (2 ids)", refusal(tokenizer("\"a\": 1", ", \"post_processor\": {\"type\": \"BertProcessing\","
                + " \"cls\": [\"[CLS]\", 0], \"sep\": [\"x\", 7]}")));
    }

    @Test
    void refusesDecoderPatternsItCannotRun() {
        assertEquals("tokenizer.json: the decoder's Replace pattern \"(a\" is not a regular expression: Unclosed"
                + " group", refusal(tokenizer("\"a\": 1", ", \"decoder\": {\"type\": \"Replace\", \"pattern\":"
                + " {\"Regex\": \"(a\"}, \"content\": \"\"}")));
        // Java's regular expressions backtrack through a back reference: this one reads 27 characters 5 x 10^8 times
        assertEquals("tokenizer.json: the decoder's Replace pattern ((a)\\2*)+$ reads token 1 more than 11520 times; a"
                + " regular expression that backtracks without bound is refused",
                refusal(tokenizer("\"" + "a".repeat(28) + "!\": 1", ", \"decoder\": {\"type\": \"Replace\","
                        + " \"pattern\": {\"Regex\": \"((a)\\\\2*)+$\"}, \"content\": \"\"}")));
    }
}
