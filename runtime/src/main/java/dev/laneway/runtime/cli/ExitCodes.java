package dev.laneway.runtime.cli;

/** The launcher's exit codes. */
public final class ExitCodes {
    /** Done. */
    public static final int OK = 0;
    /** Something failed while doing what was asked. */
    public static final int FAILED = 1;
    /** The command line was wrong, or no route can serve the model with the options given. */
    public static final int USAGE = 2;
    /** The subcommand is not part of this build. */
    public static final int NOT_BUILT = 3;

    private ExitCodes() {
    }
}
