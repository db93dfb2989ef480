package dev.laneway.runtime.text;

import dev.laneway.spi.ServedModel;

import java.util.Arrays;

/**
 * Turns generated token ids into text as they come, emitting only complete characters: a token that ends inside a
 * multi-byte UTF-8 sequence (decoded as U+FFFD) is held back until the sequence completes. Decoding the whole
 * sequence each time keeps tokenizer rules that span tokens (leading-space stripping, byte fallback) exact.
 */
public final class IncrementalText {
    private static final char REPLACEMENT = '\uFFFD';

    private final ServedModel model;
    private int[] ids = new int[64];
    private int count;
    private int emitted;

    public IncrementalText(ServedModel model) {
        this.model = model;
    }

    /** Adds a token and returns the text that became final with it (possibly empty). */
    public String add(int id) {
        if (count == ids.length) {
            ids = Arrays.copyOf(ids, count * 2);
        }
        ids[count++] = id;
        String text = model.detokenize(Arrays.copyOf(ids, count));
        int end = text.length();
        // An incomplete UTF-8 sequence decodes to trailing replacement characters: wait for the rest.
        int held = 0;
        while (end > emitted && text.charAt(end - 1) == REPLACEMENT && held < 3) {
            end--;
            held++;
        }
        if (end <= emitted) {
            return "";
        }
        String fresh = text.substring(emitted, end);
        emitted = end;
        return fresh;
    }

    /** The rest of the text when generation has ended, incomplete characters included. */
    public String flush() {
        String text = model.detokenize(Arrays.copyOf(ids, count));
        String rest = text.length() > emitted ? text.substring(emitted) : "";
        emitted = text.length();
        return rest;
    }
}
