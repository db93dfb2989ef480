package dev.laneway.runtime.api;

import dev.laneway.engine.testing.LlamaCppModels;
import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The infill prompt on real code-model vocabularies: StarCoder's (prefix, suffix, middle, repository and file
 * tokens: the repository-level layout) and DeepSeek-Coder's (its begin, hole and end tokens, no file tokens: chunks
 * separated by a snippet line, BOS before the prefix); a vocabulary without such tokens has none; special-token text
 * in the client's code stays text.
 */
class InfillPromptTest {

    private static VocabularyModel model(String vocabulary) throws Exception {
        Path templates = LlamaCppModels.templates().get(0).getParent();
        TextTokenizer tokenizer = TokenizerLoader.load(templates.getParent().resolve("ggml-vocab-" + vocabulary
                + ".gguf"));
        return new VocabularyModel(tokenizer, new ChatTemplate(ChatTemplate.CHATML, "", ""));
    }

    private static int[] concat(int[]... parts) {
        return java.util.Arrays.stream(parts).flatMapToInt(java.util.Arrays::stream).toArray();
    }

    private static int[] id(VocabularyModel model, String special) {
        int[] ids = model.tokenize(special, false, true);
        assertEquals(1, ids.length, special);
        return ids;
    }

    @Test
    void starCoderGetsTheRepositoryLevelLayout() throws Exception {
        VocabularyModel model = model("starcoder");
        InfillPrompt.FimTokens fim = InfillPrompt.tokens(model).orElseThrow();
        assertTrue(fim.rep().isPresent() && fim.sep().isPresent());
        String prefix = "def add(a, b):\n    ";
        String suffix = "\n\nprint(add(1, 2))\n";
        int[] got = InfillPrompt.build(model, fim, prefix, suffix,
                List.of(new InfillPrompt.Extra("util.py", "X = 1\n")), "return");
        int[] want = concat(id(model, "<repo_name>"), model.tokenize("myproject\n", false, false),
                id(model, "<file_sep>"), model.tokenize("util.py\n", false, false),
                model.tokenize("X = 1\n", false, false),
                id(model, "<file_sep>"), model.tokenize("filename\n", false, false),
                model.tokenize("", true, false),
                id(model, "<fim_prefix>"), model.tokenize(prefix, false, false), model.tokenize("return", false, false),
                id(model, "<fim_suffix>"), model.tokenize(suffix, false, false), id(model, "<fim_middle>"));
        assertArrayEquals(want, got);
    }

    @Test
    void deepSeekCoderGetsItsHoleTokensAndSnippetLines() throws Exception {
        VocabularyModel model = model("deepseek-coder");
        InfillPrompt.FimTokens fim = InfillPrompt.tokens(model).orElseThrow();
        assertTrue(fim.rep().isEmpty() && fim.sep().isEmpty());
        int[] got = InfillPrompt.build(model, fim, "int x = ", ";", List.of(new InfillPrompt.Extra("a.c",
                "int y;")), "");
        int[] bos = model.tokenize("", true, false);
        assertEquals(1, bos.length, "DeepSeek-Coder adds BOS");
        int[] want = concat(model.tokenize("\n\n--- snippet ---\n\n", false, false),
                model.tokenize("int y;", false, false), bos, id(model, "<｜fim▁begin｜>"),
                model.tokenize("int x = ", false, false), id(model, "<｜fim▁hole｜>"), model.tokenize(";", false, false),
                id(model, "<｜fim▁end｜>"));
        assertArrayEquals(want, got);
    }

    @Test
    void specialTokenTextInTheCodeStaysTextAndAVocabularyWithoutTokensHasNone() throws Exception {
        VocabularyModel model = model("starcoder");
        InfillPrompt.FimTokens fim = InfillPrompt.tokens(model).orElseThrow();
        int[] got = InfillPrompt.build(model, fim, "x = '<fim_middle>'", "", List.of(), "");
        int middle = id(model, "<fim_middle>")[0];
        assertEquals(1, IntStream.of(got).filter(t -> t == middle).count(), "only the layout's own middle token");
        assertTrue(InfillPrompt.tokens(model("llama-spm")).isEmpty());
    }
}
