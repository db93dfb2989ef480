package dev.laneway.engine.tokenizer;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Creates Hugging Face tokenizers through DJL's binding. Its jar carries the CPU build of the native library, which
 * is unpacked to DJL's cache directory on first use; on a machine with CUDA, DJL would otherwise look for a CUDA build
 * and try to download it, so the CPU flavor is chosen unless the environment says otherwise. Nothing is fetched:
 * DJL runs offline, and its usage report (a call to the cloud metadata address and then to its makers' servers, made
 * when a tokenizer is created, which also cost a tenth of a second of every start) is turned off.
 */
final class NativeTokenizers {
    private NativeTokenizers() {
    }

    /** DJL's setting for which build of the library to load. */
    private static final String FLAVOR = "RUST_FLAVOR";

    /** DJL's settings for never downloading anything and for not reporting its use. */
    static final String OFFLINE = "ai.djl.offline";
    static final String NO_TRACKING = "OPT_OUT_TRACKING";

    static {
        setUnlessGiven(FLAVOR, "cpu");
        System.setProperty(OFFLINE, "true");
        System.setProperty(NO_TRACKING, "true");
    }

    private static void setUnlessGiven(String name, String value) {
        if (System.getenv(name) == null && System.getProperty(name) == null) {
            System.setProperty(name, value);
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
