package dev.laneway.runtime.cli;

import dev.laneway.spi.TokenCodec;
import dev.laneway.spi.TokenizerLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * {@code laneway tokenize}: one line of space-separated token ids per input line, or per string of a llama.cpp
 * tokenizer test file (strings separated by {@code __ggml_vocab_test__} lines), in the {@code .out} format.
 */
@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = "Print the token ids of each input line (or of each __ggml_vocab_test__-separated string).")
final class TokenizeCommand implements Callable<Integer> {
    /** The line that separates strings in a llama.cpp tokenizer test file. */
    static final String SEPARATOR = "__ggml_vocab_test__";

    @Option(names = {"-m", "--model"}, required = true, paramLabel = "MODEL",
            description = "A container directory, .gguf file (a vocabulary-only one will do) or tokenizer.json.")
    Path model;

    @Option(names = "--special", description = "Add the model's special tokens (BOS) and parse special-token text.")
    boolean special;

    @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "Read the input from FILE (default: stdin).")
    Path file;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (!Files.exists(model)) {
            throw new UsageException("model path does not exist: " + model);
        }
        if (file != null && !Files.isRegularFile(file)) {
            throw new UsageException("input file does not exist: " + file);
        }
        TokenCodec codec = load(model).orElseThrow(() -> new UsageException("cannot read a tokenizer from " + model));
        String input;
        try (InputStream in = file != null ? Files.newInputStream(file) : System.in) {
            input = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        PrintWriter out = spec.commandLine().getOut();
        for (String s : split(input)) {
            int[] ids = codec.encode(s, special, special);
            out.println(Arrays.stream(ids).mapToObj(i -> " " + i).collect(Collectors.joining()));
        }
        out.flush();
        return ExitCodes.OK;
    }

    /**
     * The strings of a test file (each followed by a separator line), or the lines of plain input.
     */
    static List<String> split(String input) {
        String separator = "\n" + SEPARATOR + "\n";
        if (!input.contains(separator)) {
            return input.lines().toList();
        }
        List<String> parts = Arrays.asList(input.split(separator, -1));
        // The text after the last separator is empty in a well-formed file.
        return parts.get(parts.size() - 1).isEmpty() ? parts.subList(0, parts.size() - 1) : parts;
    }

    private Optional<TokenCodec> load(Path path) {
        for (TokenizerLoader loader : ServiceLoader.load(TokenizerLoader.class, getClass().getClassLoader())) {
            try {
                Optional<TokenCodec> codec = loader.load(path);
                if (codec.isPresent()) {
                    return codec;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e.getMessage(), e);
            }
        }
        return Optional.empty();
    }
}
