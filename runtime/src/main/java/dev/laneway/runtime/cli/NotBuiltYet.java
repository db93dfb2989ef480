package dev.laneway.runtime.cli;

/** The answer of a subcommand whose implementation is not part of this build. */
final class NotBuiltYet {
    private NotBuiltYet() {
    }

    static int say(picocli.CommandLine.Model.CommandSpec spec, String arrivesWith) {
        var err = spec.commandLine().getErr();
        err.println("laneway " + spec.name() + ": not part of this build yet (it arrives with " + arrivesWith + ")");
        err.flush();
        return ExitCodes.NOT_BUILT;
    }
}
