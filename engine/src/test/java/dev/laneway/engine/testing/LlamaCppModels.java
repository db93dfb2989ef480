package dev.laneway.engine.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A test tool: what llama.cpp's source keeps under {@code models}: real models' chat templates (many with tool use)
 * in {@code models/templates}, and vocabulary-only GGUFs with their tokenizer test vectors
 * ({@code ggml-vocab-NAME.gguf}, {@code .inp}, {@code .out}). Taken from the source bundle the pinned
 * {@code node-llama-cpp} npm package ships, fetched with npm and git into {@code target/llama-cpp} once (or
 * {@code -Dllamacpp.work});
 * {@code -Dllamacpp.models=DIR} names a directory that already holds them. npm, tar and git must be installed; their
 * absence, or a download that fails, fails the test.
 */
public final class LlamaCppModels {
    static final String PACKAGE = "node-llama-cpp@3.21.1";
    /** Where the download goes: {@code -Dllamacpp.work=DIR}, so that several modules' tests share one. */
    private static final Path WORK = Path.of(System.getProperty("llamacpp.work", "target/llama-cpp"));

    private LlamaCppModels() {
    }

    /** Every {@code .jinja} template, by file name. */
    public static List<Path> templates() throws IOException, InterruptedException {
        return list(dir().resolve("templates"), ".jinja");
    }

    /** Every vocabulary GGUF that comes with test vectors, by file name. */
    public static List<Path> vocabularies() throws IOException, InterruptedException {
        return list(dir(), ".gguf").stream()
                .filter(f -> f.getFileName().toString().startsWith("ggml-vocab-"))
                .filter(f -> Files.isRegularFile(Path.of(f + ".inp")) && Files.isRegularFile(Path.of(f + ".out")))
                .toList();
    }

    private static synchronized Path dir() throws IOException, InterruptedException {
        String given = System.getProperty("llamacpp.models");
        Path dir = given != null ? Path.of(given) : WORK.resolve("models");
        if (given == null && !Files.isDirectory(dir.resolve("templates"))) {
            fetch();
        }
        return dir;
    }

    private static List<Path> list(Path dir, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> found = files.filter(f -> f.getFileName().toString().endsWith(suffix)).sorted().toList();
            if (found.isEmpty()) {
                throw new AssertionError("no " + suffix + " files in " + dir);
            }
            return found;
        }
    }

    private static void fetch() throws IOException, InterruptedException {
        Path pkg = Files.createDirectories(WORK.resolve("package"));
        run(pkg, "npm", "pack", PACKAGE, "--silent", "--no-audit", "--no-fund");
        Path tarball;
        try (Stream<Path> files = Files.list(pkg)) {
            tarball = files.filter(f -> f.toString().endsWith(".tgz")).findFirst()
                    .orElseThrow(() -> new AssertionError("npm pack " + PACKAGE + " left no tarball in " + pkg));
        }
        run(pkg, "tar", "-xzf", tarball.getFileName().toString(), "package/llama/gitRelease.bundle");
        run(WORK, "git", "clone", "-q", "--bare", "package/package/llama/gitRelease.bundle", "source.git");
        run(WORK, "sh", "-c", "git --git-dir=source.git archive HEAD models | tar -x");
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("llama-cpp-models", ".log");
        Process p;
        try {
            p = new ProcessBuilder(new ArrayList<>(List.of(command))).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new AssertionError(command[0] + " is needed to fetch llama.cpp's models directory: " + e.getMessage(),
                    e);
        }
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in 600 s");
        }
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed:\n" + Files.readString(log,
                    StandardCharsets.UTF_8));
        }
        Files.deleteIfExists(log);
    }
}
