package dev.laneway.engine.gguf;

/** Names of the {@code ggml_type} numbers, so that an unsupported tensor type can be named in messages. */
final class GgmlTypeNames {
    private static final String[] NAMES = {
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2 (removed)", "Q4_3 (removed)", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
        "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
        "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16", "Q4_0_4_4 (removed)",
        "Q4_0_4_8 (removed)", "Q4_0_8_8 (removed)", "TQ1_0", "TQ2_0", "IQ4_NL_4_4 (removed)", "IQ4_NL_4_8 (removed)",
        "IQ4_NL_8_8 (removed)", "MXFP4",
    };

    private GgmlTypeNames() {
    }

    /** "ggml type 16 (IQ2_XXS)", or "unknown ggml type N". */
    static String describe(int id) {
        return id >= 0 && id < NAMES.length ? "ggml type " + id + " (" + NAMES[id] + ")"
                : "unknown ggml type " + Integer.toUnsignedString(id);
    }
}
