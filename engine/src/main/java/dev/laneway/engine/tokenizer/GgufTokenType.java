package dev.laneway.engine.tokenizer;

/** What a vocabulary entry is, as {@code tokenizer.ggml.token_type} numbers it. */
public enum GgufTokenType {
    UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE;

    /** The type numbered {@code code}; numbers outside the table read as {@link #UNDEFINED}. */
    public static GgufTokenType of(long code) {
        return code >= 0 && code < values().length ? values()[(int) code] : UNDEFINED;
    }
}
