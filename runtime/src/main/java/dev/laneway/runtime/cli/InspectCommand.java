package dev.laneway.runtime.cli;

import dev.laneway.spi.ModelInspector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;

/** {@code laneway inspect}: tensors, dtypes, shapes, config and tokenizer of a container or GGUF file. */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Show a container's or GGUF file's tensors, dtypes, shapes, config and tokenizer.")
final class InspectCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "MODEL", description = "A container directory, model.q4nx or .gguf file.")
    Path model;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (!Files.exists(model)) {
            throw new UsageException("model path does not exist: " + model);
        }
        for (ModelInspector inspector : ServiceLoader.load(ModelInspector.class, getClass().getClassLoader())) {
            if (inspector.reads(model)) {
                try {
                    spec.commandLine().getOut().print(inspector.inspect(model));
                } catch (IOException e) {
                    throw new UncheckedIOException(e.getMessage(), e);
                }
                spec.commandLine().getOut().flush();
                return ExitCodes.OK;
            }
        }
        throw new UsageException("cannot inspect " + model + ": expected a container directory, a model.q4nx file"
                + " or a .gguf file");
    }
}
