/**
 * Tokenizers and chat templates.
 *
 * <p>{@link dev.laneway.engine.tokenizer.TextTokenizer} runs a Hugging Face {@code tokenizer.json} with the Hugging
 * Face tokenizers library (DJL's binding; the native library ships inside its jar, nothing is downloaded).
 * {@link dev.laneway.engine.tokenizer.TokenizerLoader} opens one from a model directory, a {@code tokenizer.json} or a
 * GGUF file; a GGUF vocabulary is first converted by
 * {@link dev.laneway.engine.tokenizer.GgufTokenizerConverter} into {@code tokenizer.json} and
 * {@code tokenizer_config.json} text that tokenizes as llama.cpp does with that file (checked against llama.cpp's test
 * vectors). {@link dev.laneway.engine.tokenizer.ChatTemplate} renders a model's Jinja chat template.
 */
package dev.laneway.engine.tokenizer;
