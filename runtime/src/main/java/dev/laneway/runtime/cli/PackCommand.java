package dev.laneway.runtime.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code laneway pack}: Pack a GGUF file or a Hugging Face checkpoint into a container directory. */
@Command(name = "pack", mixinStandardHelpOptions = true, description = "Pack a GGUF file or a Hugging Face checkpoint into a container directory.")
final class PackCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> arguments;

    @Override
    public Integer call() {
        return NotBuiltYet.say(spec, "the engine");
    }
}
