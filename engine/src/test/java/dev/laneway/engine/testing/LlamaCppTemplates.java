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
 * A test tool: the chat templates that llama.cpp's source keeps under {@code models/templates} (real models' templates,
 * many with tool use), taken from the source bundle the pinned {@code node-llama-cpp} npm package ships: fetched with
 * npm and git into {@code target/llama-cpp} once. {@code -Dllamacpp.templates=DIR} names a directory that already holds
 * them. npm, tar and git must be installed; their absence, or a download that fails, fails the test.
 */
public final class LlamaCppTemplates {
    static final String PACKAGE = "node-llama-cpp@3.21.1";
    private static final Path WORK = Path.of("target", "llama-cpp");

    private LlamaCppTemplates() {
    }

    /** Every {@code .jinja} template, by file name. */
    public static synchronized List<Path> all() throws IOException, InterruptedException {
        String given = System.getProperty("llamacpp.templates");
        Path dir = given != null ? Path.of(given) : WORK.resolve("models").resolve("templates");
        if (given == null && !Files.isDirectory(dir)) {
            fetch();
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> templates = files.filter(f -> f.getFileName().toString().endsWith(".jinja")).sorted().toList();
            if (templates.isEmpty()) {
                throw new AssertionError("no chat templates in " + dir);
            }
            return templates;
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
        run(WORK, "sh", "-c", "git --git-dir=source.git archive HEAD models/templates | tar -x");
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("llama-cpp-templates", ".log");
        Process p;
        try {
            p = new ProcessBuilder(new ArrayList<>(List.of(command))).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new AssertionError(command[0] + " is needed to fetch llama.cpp's chat templates: " + e.getMessage(),
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
