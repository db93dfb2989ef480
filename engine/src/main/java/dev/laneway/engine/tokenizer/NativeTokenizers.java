package dev.laneway.engine.tokenizer;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Creates Hugging Face tokenizers through DJL's binding. Its jar carries the CPU build of the native library, which
 * is unpacked to DJL's cache directory on first use; on a machine with CUDA, DJL would otherwise look for a CUDA build
 * and try to download it, so the CPU flavor is chosen unless the environment says otherwise. Nothing is fetched.
 */
final class NativeTokenizers {
    private NativeTokenizers() {
    }

    /** DJL's setting for which build of the library to load. */
    private static final String FLAVOR = "RUST_FLAVOR";

    static {
        if (System.getenv(FLAVOR) == null && System.getProperty(FLAVOR) == null) {
            System.setProperty(FLAVOR, "cpu");
        }
    }

    /** A tokenizer from {@code tokenizer.json} text; no truncation, no padding, special tokens added on request. */
    static HuggingFaceTokenizer fromJson(String tokenizerJson) throws IOException {
        Map<String, String> options = Map.of(
                "addSpecialTokens", "false",
                "truncation", "false",
                "padding", "false");
        try {
            return HuggingFaceTokenizer.newInstance(
                    new ByteArrayInputStream(tokenizerJson.getBytes(StandardCharsets.UTF_8)), options);
        } catch (RuntimeException e) {
            // The native library reports a malformed tokenizer.json as a RuntimeException.
            throw new IOException("the tokenizer.json is not a valid Hugging Face tokenizer: " + e.getMessage(), e);
        }
    }
}
