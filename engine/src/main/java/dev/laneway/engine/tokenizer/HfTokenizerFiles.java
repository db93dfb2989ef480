package dev.laneway.engine.tokenizer;

/**
 * The two Hugging Face tokenizer files, as text.
 *
 * @param tokenizerJson       {@code tokenizer.json}
 * @param tokenizerConfigJson {@code tokenizer_config.json}
 */
public record HfTokenizerFiles(String tokenizerJson, String tokenizerConfigJson) {
}
