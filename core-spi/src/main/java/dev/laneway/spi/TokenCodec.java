package dev.laneway.spi;

/** Text to token ids and back. */
public interface TokenCodec {

    /**
     * @param addSpecial   add the leading special tokens (BOS) where the tokenizer does
     * @param parseSpecial recognise special-token text as the special token
     */
    int[] encode(String text, boolean addSpecial, boolean parseSpecial);

    String decode(int[] ids);

    /** The texts that {@code parseSpecial} turns into special (control) tokens, such as {@code <|im_start|>}. */
    java.util.Set<String> specialTexts();
}
