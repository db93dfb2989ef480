package dev.laneway.runtime.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/** The {@code laneway} command and its subcommands (README.md). */
@Command(name = "laneway", mixinStandardHelpOptions = true, versionProvider = LanewayCommand.Version.class,
        description = "An OpenAI-compatible LLM server whose model routes are plugins.",
        subcommands = {ServeCommand.class, RunCommand.class, PackCommand.class, RoutesCommand.class,
                InspectCommand.class, TokenizeCommand.class, BenchCommand.class},
        synopsisSubcommandLabel = "COMMAND")
public final class LanewayCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
    }

    /**
     * Runs the command line and returns its exit code. Bad input gives one line on {@code err} and exit code 2;
     * nothing prints a stack trace.
     */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new LanewayCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            String command = e.getCommandLine().getCommandName();
            String prefix = command.equals("laneway") ? "laneway" : "laneway " + command;
            err.println(prefix + ": " + e.getMessage() + " (see ./" + prefix + " --help)");
            err.flush();
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((e, c, parsed) -> {
            String command = c.getCommandName().equals("laneway") ? "laneway" : "laneway " + c.getCommandName();
            boolean usage = e instanceof UsageException;
            err.println(command + ": " + (usage ? "" : "error: ") + oneLine(e));
            err.flush();
            return usage ? ExitCodes.USAGE : ExitCodes.FAILED;
        });
        int code = cli.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    private static String oneLine(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = LanewayCommand.class.getPackage().getImplementationVersion();
            return new String[]{"laneway " + (v != null ? v : "(development build)")};
        }
    }
}
