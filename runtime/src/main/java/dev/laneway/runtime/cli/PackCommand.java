package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.PackCache;
import dev.laneway.spi.ModelPacker;
import dev.laneway.spi.PackOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code laneway pack}: a GGUF file or Hugging Face checkpoint into a container directory. */
@Command(name = "pack", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Pack a GGUF file or a Hugging Face checkpoint into a container directory.")
final class PackCommand implements Callable<Integer> {
    private static final Set<String> QUANTS = Set.of("q8", "q4_1", "q4_k", "bf16", "f32");

    @Parameters(index = "0", paramLabel = "SOURCE", description = "A .gguf file or a Hugging Face checkpoint directory.")
    Path source;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "DIR",
            description = "The container directory to write; must not exist.")
    Path output;

    @Option(names = "--quant", paramLabel = "Q",
            description = "Weight format: q8, q4_1, q4_k (from GGUF Q4_K only), bf16 or f32 (default: each quantized "
                    + "matrix keeps its bits, F32 sources stay f32, 16-bit ones become bf16).")
    String quant;

    @Option(names = "--lane", description = "Also write npu/lane.json, the lane manifest for the host kernel set.")
    boolean lane;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (!Files.exists(source)) {
            throw new UsageException("source does not exist: " + source);
        }
        if (Files.exists(output)) {
            throw new UsageException("output " + output + " exists already; pack writes a new directory");
        }
        if (quant != null && !QUANTS.contains(quant)) {
            throw new UsageException("--quant " + quant + ": expected one of q8, q4_1, q4_k, bf16, f32");
        }
        ModelPacker packer = PackCache.packerFor(source).orElseThrow(() -> new UsageException(
                "cannot pack " + source + ": expected a .gguf file or a Hugging Face checkpoint directory"
                        + " (config.json, *.safetensors, tokenizer.json)"));
        var err = spec.commandLine().getErr();
        try {
            packer.pack(source.toAbsolutePath(), output.toAbsolutePath(), new PackOptions(Optional.ofNullable(quant), lane),
                    new ProgressPrinter(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        spec.commandLine().getOut().println("packed " + source + " into " + output);
        return ExitCodes.OK;
    }
}
