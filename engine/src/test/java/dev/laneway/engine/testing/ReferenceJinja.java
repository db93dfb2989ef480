package dev.laneway.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A test tool: renders chat templates with {@code @huggingface/jinja}, the Jinja engine of Hugging Face's JavaScript
 * libraries, as the reference for Laneway's own rendering. Runs {@code src/test/node/render-templates.mjs} with Node,
 * the pinned package installed with npm into {@code target/template-reference} once; their absence fails the test.
 */
public final class ReferenceJinja {
    private static final Path SOURCES = Path.of("src", "test", "node");
    private static final Path WORK = Path.of("target", "template-reference");
    private static final ObjectMapper JSON = new ObjectMapper();

    private ReferenceJinja() {
    }

    /** One template with its variables. */
    public record Case(String template, Map<String, Object> context) {
    }

    /** What rendering gave: the text, or the error's message. */
    public record Rendered(Optional<String> output, Optional<String> error) {
    }

    /** Renders every case in one Node run. */
    public static List<Rendered> render(List<Case> cases) throws IOException, InterruptedException {
        install();
        Path in = WORK.resolve("cases.json");
        Path out = WORK.resolve("results.json");
        JSON.writeValue(in.toFile(), cases);
        run(List.of("node", "render-templates.mjs", in.getFileName().toString(), out.getFileName().toString()), 300);
        List<Rendered> results = new ArrayList<>();
        for (JsonNode r : JSON.readTree(out.toFile())) {
            results.add(new Rendered(Optional.ofNullable(r.get("output")).map(JsonNode::textValue),
                    Optional.ofNullable(r.get("error")).map(JsonNode::textValue)));
        }
        return results;
    }

    private static synchronized void install() throws IOException, InterruptedException {
        Files.createDirectories(WORK);
        for (String file : List.of("package.json", "render-templates.mjs")) {
            Files.copy(SOURCES.resolve(file), WORK.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        }
        if (!Files.isDirectory(WORK.resolve("node_modules").resolve("@huggingface").resolve("jinja"))) {
            run(List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error"), 300);
        }
    }

    private static void run(List<String> command, int timeoutSeconds) throws IOException, InterruptedException {
        Path log = WORK.resolve("last-run.log");
        Process p;
        try {
            p = new ProcessBuilder(command).directory(WORK.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new AssertionError(command.get(0) + " is needed for the reference template engine: "
                    + e.getMessage(), e);
        }
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed:\n" + Files.readString(log,
                    StandardCharsets.UTF_8));
        }
    }
}
