package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GgufTokenizerConverterTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void writesASentencePieceTokenizerAndItsConfig() throws Exception {
        HfTokenizerFiles files = GgufTokenizerConverter.convert(GgufFile.open(Shared.model(
                "vocab/ggml-vocab-phi-3.gguf")));
        JsonNode tokenizer = JSON.readTree(files.tokenizerJson());
        JsonNode model = tokenizer.get("model");
        assertEquals("BPE", model.get("type").asText());
        assertTrue(model.get("byte_fallback").asBoolean());
        assertEquals(13, model.get("vocab").get("<0x0A>").asInt());
        assertTrue(model.get("merges").size() > 30000, "merges: " + model.get("merges").size());
        assertEquals("Prepend", tokenizer.at("/normalizer/normalizers/0/type").asText());
        JsonNode end = find(tokenizer.get("added_tokens"), "<|end|>");
        assertTrue(end.get("rstrip").asBoolean(), "Phi-3 special tokens swallow the whitespace after them");
        assertFalse(find(tokenizer.get("added_tokens"), "<s>").get("rstrip").asBoolean());

        JsonNode config = JSON.readTree(files.tokenizerConfigJson());
        assertEquals("<s>", config.get("bos_token").asText());
        assertEquals("<|endoftext|>", config.get("eos_token").asText());
        assertTrue(config.get("add_bos_token").asBoolean());
        assertFalse(config.get("add_eos_token").asBoolean());
        assertTrue(config.get("chat_template").asText().contains("<|assistant|>"));
    }

    @Test
    void writesAByteLevelTokenizerWithTheNamedPreTokenizer() throws Exception {
        HfTokenizerFiles files = GgufTokenizerConverter.convert(GgufFile.open(Shared.model(
                "vocab/ggml-vocab-deepseek-coder.gguf")));
        JsonNode tokenizer = JSON.readTree(files.tokenizerJson());
        JsonNode steps = tokenizer.at("/pre_tokenizer/pretokenizers");
        assertEquals(6, steps.size());
        assertEquals("\\s?\\p{L}+", steps.get(1).at("/pattern/Regex").asText());
        assertEquals("ByteLevel", steps.get(5).get("type").asText());
        assertEquals(31757, tokenizer.at("/model/merges").size());
        assertEquals("ByteLevel", tokenizer.at("/decoder/type").asText());
        JsonNode config = JSON.readTree(files.tokenizerConfigJson());
        assertEquals("<｜begin▁of▁sentence｜>", config.get("bos_token").asText());
        assertFalse(config.has("chat_template"));
    }

    @Test
    void writesWordPieceTokensInBertForm() {
        assertEquals("hello", GgufTokenizerConverter.wordPieceText("▁hello"));
        assertEquals("##ing", GgufTokenizerConverter.wordPieceText("ing"));
        assertEquals("[CLS]", GgufTokenizerConverter.wordPieceText("[CLS]"));
    }

    @Test
    void refusesUnknownPreTokenizersByName() throws Exception {
        GgufVocabulary gpt2 = GgufVocabulary.read(GgufFile.open(Shared.model("vocab/ggml-vocab-gpt-2.gguf")));
        GgufVocabulary renamed = new GgufVocabulary(gpt2.model(), "mystery-bpe", gpt2.tokens(), gpt2.scores(),
                gpt2.types(), gpt2.merges(), gpt2.bos(), gpt2.eos(), gpt2.unk(), gpt2.pad(), gpt2.addBos(),
                gpt2.addEos(), gpt2.addSpacePrefix(), Optional.empty(), Optional.empty(), gpt2.modelName());
        FormatException e = assertThrows(FormatException.class,
                () -> GgufTokenizerConverter.convert(renamed, Path.of("model.gguf")));
        assertTrue(e.getMessage().startsWith("model.gguf: tokenizer.ggml.pre 'mystery-bpe' is not a known"),
                e.getMessage());
    }

    @Test
    void refusesAFileWithoutTokenizer() throws Exception {
        GgufVocabulary llama = GgufVocabulary.read(GgufFile.open(Shared.stories260kGguf()));
        GgufVocabulary unigram = new GgufVocabulary("t5", llama.pre(), llama.tokens(), llama.scores(),
                llama.types(), null, llama.bos(), llama.eos(), OptionalInt.empty(), OptionalInt.empty(), false,
                true, true, Optional.empty(), Optional.empty(), "");
        FormatException e = assertThrows(FormatException.class,
                () -> GgufTokenizerConverter.convert(unigram, Path.of("t5.gguf")));
        assertEquals("t5.gguf: tokenizer.ggml.model 't5' is not supported (supported: llama, gpt2, bert)",
                e.getMessage());
    }

    private static JsonNode find(JsonNode added, String content) {
        for (JsonNode t : added) {
            if (t.get("content").asText().equals(content)) {
                return t;
            }
        }
        throw new AssertionError("no added token " + content);
    }
}
