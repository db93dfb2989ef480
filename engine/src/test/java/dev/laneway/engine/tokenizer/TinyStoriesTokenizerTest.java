package dev.laneway.engine.tokenizer;

import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A Hugging Face checkpoint's own tokenizer.json and tokenizer_config.json (TinyStories-656K, BPE of 2048). */
class TinyStoriesTokenizerTest {
    private static TextTokenizer tokenizer;

    @BeforeAll
    static void load() throws Exception {
        tokenizer = TokenizerLoader.load(Shared.tinystoriesCheckpoint());
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void addsBosAsTheConfigSays() {
        assertEquals(2048, tokenizer.vocabSize());
        assertEquals("<|start_story|>", tokenizer.tokenText(tokenizer.bosId().orElseThrow()));
        assertEquals("<|end_story|>", tokenizer.tokenText(tokenizer.eosId().orElseThrow()));
        assertTrue(tokenizer.addsBos());
        int[] withBos = tokenizer.encode("Once upon a time", true, true);
        int[] without = tokenizer.encode("Once upon a time", false, true);
        assertEquals(1, withBos[0]);
        assertArrayEquals(without, Arrays.copyOfRange(withBos, 1, withBos.length));
        assertTrue(tokenizer.endOfGenerationIds().contains(2));
    }

    @Test
    void roundTripsStories() {
        for (String story : new String[]{
                "Once upon a time, there was a little girl named Lily.",
                "Tom said, \"I want to play!\" He ran to the park.",
                "  two spaces and\nnew lines\n\n",
                "Numbers 1234 and symbols $5 - ok?"}) {
            int[] ids = tokenizer.encode(story, true, true);
            // Hugging Face keeps the space the normalizer put before the text when a special token precedes it.
            assertEquals("<|start_story|> " + story, tokenizer.detokenize(ids), story);
            assertEquals(story, tokenizer.detokenize(Arrays.copyOfRange(ids, 1, ids.length)), story);
        }
    }

    @Test
    void specialTokenTextIsATokenOnlyWhenParsed() {
        // Its added tokens are "normalized", so they match after the "▁" the normalizer writes for a space.
        int[] parsed = tokenizer.encode("The end. <|end_story|>", false, true);
        assertEquals(2, parsed[parsed.length - 1]);
        int[] plain = tokenizer.encode("The end. <|end_story|>", false, false);
        assertFalse(Arrays.stream(plain).anyMatch(id -> id == 2));
        assertEquals("The end. <|end_story|>", tokenizer.detokenize(plain));
    }
}
