package dev.laneway.runtime.cli;

/** The command line asks for something that cannot be done; reported in one line with exit code 2. */
public class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }
}
