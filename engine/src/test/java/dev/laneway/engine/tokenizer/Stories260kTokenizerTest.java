package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stories260K model's SentencePiece vocabulary (512 tokens) against llama-server's outputs. */
class Stories260kTokenizerTest {
    private static TextTokenizer tokenizer;

    @BeforeAll
    static void load() throws Exception {
        tokenizer = TokenizerLoader.load(Shared.stories260kGguf());
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void tokenizesThePromptWithBos() {
        assertArrayEquals(new int[]{1, 403, 407, 261, 378}, tokenizer.encode("Once upon a time", true, true));
        assertEquals(512, tokenizer.vocabSize());
        assertEquals(1, tokenizer.bosId().orElseThrow());
        assertEquals(2, tokenizer.eosId().orElseThrow());
        assertTrue(tokenizer.addsBos());
        assertTrue(tokenizer.endOfGenerationIds().contains(2));
    }

    @Test
    void tokenizesEveryGoldenPromptAndDecodesEveryCompletion() throws Exception {
        JsonNode golden = new ObjectMapper().readTree(Shared.golden("stories260K-public.json").toFile());
        int records = 0;
        for (JsonNode r : golden.get("records")) {
            String prompt = r.get("prompt").asText();
            assertArrayEquals(ints(r.get("prompt_token_ids")), tokenizer.encode(prompt, true, true), prompt);
            assertArrayEquals(ints(r.get("prompt_token_ids_no_special")), tokenizer.encode(prompt, false, true),
                    prompt);
            assertEquals(r.get("completion_text").asText(), tokenizer.decode(ints(r.get("completion_token_ids"))),
                    prompt);
            for (JsonNode position : r.get("top5_first16")) {
                for (JsonNode candidate : position.get("top5")) {
                    int id = candidate.get("id").asInt();
                    byte[] bytes = new byte[candidate.get("bytes").size()];
                    for (int i = 0; i < bytes.length; i++) {
                        bytes[i] = (byte) candidate.get("bytes").get(i).asInt();
                    }
                    assertArrayEquals(bytes, tokenizer.tokenBytes(id), "bytes of token " + id);
                }
            }
            records++;
        }
        assertEquals(5, records);
    }

    @Test
    void detokenizeGivesBackThePrompt() {
        int[] ids = tokenizer.encode("Lily and Ben went to the park.", false, true);
        assertEquals("Lily and Ben went to the park.", tokenizer.detokenize(ids));
        // As a continuation, the first token's space is the text's own.
        assertEquals(" Lily and Ben went to the park.", tokenizer.decode(ids));
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }
}
