package dev.laneway.runtime.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code laneway tokenize}: Print the token ids of each input line. */
@Command(name = "tokenize", mixinStandardHelpOptions = true, description = "Print the token ids of each input line.")
final class TokenizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> arguments;

    @Override
    public Integer call() {
        return NotBuiltYet.say(spec, "the engine");
    }
}
