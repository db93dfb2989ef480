package dev.laneway.runtime.api;

import java.util.regex.Pattern;

/**
 * Text the server shows to anyone who reaches its port (error messages, readiness data, diagnostics): where it names
 * a file by its absolute path, only the file's own name is kept, so that no response tells how the machine is laid
 * out. The server's log keeps the whole text.
 */
public final class PublicText {
    /** An absolute path of two or more names, at the start of the text or after a space, quote or bracket. */
    private static final Pattern ABSOLUTE_PATH = Pattern.compile("(?<=^|[\\s'\"(\\[=])(?:/[^\\s'\"/()\\[\\],;]+)+/"
            + "(?=[^\\s'\"/()\\[\\],;])");

    private PublicText() {
    }

    /** The text with each absolute path cut to its last name: {@code /home/a/models/x.gguf} becomes {@code x.gguf}. */
    public static String of(String text) {
        return text == null ? null : ABSOLUTE_PATH.matcher(text).replaceAll("");
    }
}
