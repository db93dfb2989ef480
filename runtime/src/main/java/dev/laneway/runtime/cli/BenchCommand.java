package dev.laneway.runtime.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code laneway bench}: Measure prompt-processing and generation tok/s, like llama-bench. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measure prompt-processing and generation tok/s, like llama-bench.")
final class BenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Unmatched
    List<String> arguments;

    @Override
    public Integer call() {
        return NotBuiltYet.say(spec, "the native kernels");
    }
}
