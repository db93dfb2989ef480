package dev.laneway.runtime.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A test tool: runs the scripts of {@code src/test/node} with Node, installing the pinned OpenAI, Anthropic and Ollama
 * clients with npm into {@code target/node-sdk} once. Node and npm must be installed; their absence fails the test.
 */
final class NodeSdk {
    private static final Path SOURCES = Path.of("src", "test", "node");
    private static final Path WORK = Path.of("target", "node-sdk");

    private NodeSdk() {
    }

    record Run(int exitCode, String output) {
    }

    /** Runs the script against {@code baseUrl} (ending in {@code /v1}) with a chat prompt. */
    static Run run(String baseUrl, String prompt, Map<String, String> env) throws IOException, InterruptedException {
        install();
        return exec(List.of("node", "openai-sdk.mjs", baseUrl, prompt), env, 120);
    }

    /** Runs the tool-calling conversation against {@code baseUrl}: a prompt that calls, the tool's result. */
    static Run tools(String baseUrl, String calling, String result) throws IOException, InterruptedException {
        return tools(baseUrl, calling, result, "{}");
    }

    /** The same, with the script's options (its tool choices, an enum of cities; see the script). */
    static Run tools(String baseUrl, String calling, String result, String options)
            throws IOException, InterruptedException {
        install();
        return exec(List.of("node", "openai-tools.mjs", baseUrl, calling, result, options), Map.of(), 120);
    }

    /**
     * Runs a script that takes the server's address, a prompt, a prompt that makes the model call a tool, the tool's
     * result and the model's id ({@code anthropic-sdk.mjs} with the address without {@code /v1},
     * {@code openai-responses.mjs} with it).
     */
    static Run script(String script, String baseUrl, String prompt, String calling, String result, String model)
            throws IOException, InterruptedException {
        install();
        return exec(List.of("node", script, baseUrl, prompt, calling, result, model), Map.of(), 120);
    }

    /** Asks for the embeddings of {@code inputs} (a JSON list of strings) with the SDK, by default and as floats. */
    static Run embeddings(String baseUrl, String model, String inputs) throws IOException, InterruptedException {
        install();
        return exec(List.of("node", "openai-embeddings.mjs", baseUrl, model, inputs), Map.of(), 120);
    }

    /**
     * Runs {@code ollama-sdk.mjs} against the server at {@code host}: a prompt, a prompt that makes the model call a
     * tool, the tool's result, a prompt whose answer is JSON, and the model's id.
     */
    static Run ollama(String host, String prompt, String calling, String result, String jsonPrompt, String model)
            throws IOException, InterruptedException {
        install();
        return exec(List.of("node", "ollama-sdk.mjs", host, prompt, calling, result, jsonPrompt, model), Map.of(),
                120);
    }

    /** Asks for LoRA adapter {@code adapter} by its model id, with {@code openai-lora.mjs}. */
    static Run lora(String baseUrl, String adapter, String prompt) throws IOException, InterruptedException {
        install();
        return exec(List.of("node", "openai-lora.mjs", baseUrl, adapter, prompt), Map.of(), 120);
    }

    private static synchronized void install() throws IOException, InterruptedException {
        Files.createDirectories(WORK);
        for (String file : List.of("package.json", "openai-sdk.mjs", "openai-tools.mjs", "anthropic-sdk.mjs",
                "openai-responses.mjs", "openai-embeddings.mjs", "ollama-sdk.mjs", "openai-lora.mjs")) {
            Files.copy(SOURCES.resolve(file), WORK.resolve(file), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        if (Files.isDirectory(WORK.resolve("node_modules").resolve("openai"))
                && Files.isDirectory(WORK.resolve("node_modules").resolve("@anthropic-ai").resolve("sdk"))
                && Files.isDirectory(WORK.resolve("node_modules").resolve("ollama"))) {
            return;
        }
        Run npm = exec(List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error"), Map.of(), 300);
        if (npm.exitCode() != 0) {
            throw new AssertionError("npm install of the OpenAI, Anthropic and Ollama clients failed:\n" + npm.output());
        }
    }

    private static Run exec(List<String> command, Map<String, String> env, int timeoutSeconds)
            throws IOException, InterruptedException {
        Path log = WORK.resolve("last-run.log");
        ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(command)).directory(WORK.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new AssertionError(command.get(0) + " is needed for the OpenAI SDK test but could not be run: "
                    + e.getMessage(), e);
        }
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
