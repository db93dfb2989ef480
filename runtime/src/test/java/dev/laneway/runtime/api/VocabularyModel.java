package dev.laneway.runtime.api;

import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** A real tokenizer and a real template, for the prompt; it generates nothing. */
record VocabularyModel(TextTokenizer tokenizer, ChatTemplate chat) implements ServedModel {
    @Override
    public String id() {
        return "vocabulary";
    }

    @Override
    public ModelInfo info() {
        return new ModelInfo("vocabulary", 4096, tokenizer.vocabSize(), "none", "none", Map.of());
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        return tokenizer.encode(text, addSpecial, parseSpecial);
    }

    @Override
    public String detokenize(int[] ids) {
        return tokenizer.decode(ids);
    }

    @Override
    public Set<String> specialTokenTexts() {
        return tokenizer.specialTexts();
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return chat.render(messages, addGenerationPrompt);
    }

    @Override
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        throw new UnsupportedOperationException("a vocabulary generates nothing");
    }

    @Override
    public void close() {
    }
}
