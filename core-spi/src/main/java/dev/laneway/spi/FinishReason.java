package dev.laneway.spi;

/** Why a generation ended. */
public enum FinishReason {
    /** The model produced its end-of-text token. */
    END_OF_TEXT,
    /** The token budget or the context was used up. */
    LENGTH,
    /** The token sink asked to stop. */
    STOPPED
}
