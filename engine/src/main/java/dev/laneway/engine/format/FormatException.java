package dev.laneway.engine.format;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A model file that is not what it claims to be. The message names the file, where in it the problem is, and what
 * was expected there.
 */
public class FormatException extends IOException {
    public FormatException(Path file, String message) {
        super(file + ": " + message);
    }

    public FormatException(Path file, long offset, String message) {
        super(file + " at byte " + offset + ": " + message);
    }
}
