package dev.laneway.runtime.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code laneway run}: Generate one completion and stream it to stdout. */
@Command(name = "run", mixinStandardHelpOptions = true, description = "Generate one completion and stream it to stdout.")
final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> arguments;

    @Override
    public Integer call() {
        return NotBuiltYet.say(spec, "the engine");
    }
}
