package dev.laneway.runtime.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code laneway inspect}: Show a container's or GGUF file's tensors, dtypes, shapes, config and tokenizer. */
@Command(name = "inspect", mixinStandardHelpOptions = true, description = "Show a container's or GGUF file's tensors, dtypes, shapes, config and tokenizer.")
final class InspectCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> arguments;

    @Override
    public Integer call() {
        return NotBuiltYet.say(spec, "the engine");
    }
}
