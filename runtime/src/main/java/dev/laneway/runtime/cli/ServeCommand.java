package dev.laneway.runtime.cli;

import dev.laneway.runtime.api.ApiKeyFilter;
import dev.laneway.runtime.routes.DispatchReport;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.runtime.serve.ServeApplication;
import dev.laneway.spi.RouteOptions;
import io.quarkus.runtime.Quarkus;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * {@code laneway serve}: checks the command line and the route choice, then starts the HTTP server, which binds its
 * port at once and loads the model behind it. Options become {@code laneway.*} configuration, so the same settings
 * work from {@code application.properties} and {@code LANEWAY_*} environment variables.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Serve a model over an OpenAI-compatible HTTP API.")
final class ServeCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080",
            description = "Port to listen on (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--api-key", paramLabel = "KEY",
            description = "Require 'Authorization: Bearer KEY' on every endpoint but the health checks.")
    String apiKey;

    @Option(names = "--api-key-file", paramLabel = "FILE",
            description = "As --api-key, with the key on the first line of FILE (it shows in no process listing).")
    Path apiKeyFile;

    @Option(names = "--cors-origins", paramLabel = "ORIGINS", split = ",",
            description = "Origins whose web pages may read the answers (https://chat.example; localhost: any loopback"
                    + " origin; *: any); default: none, no CORS headers.")
    List<String> corsOrigins;

    @Option(names = "--temp", paramLabel = "T", description = "Default temperature (default: 0.8; 0 is greedy).")
    Double temperature;

    @Option(names = "--top-k", paramLabel = "K", description = "Default top-k (default: 40; 0 keeps every token).")
    Integer topK;

    @Option(names = "--top-p", paramLabel = "P", description = "Default top-p (default: 0.95).")
    Double topP;

    @Option(names = "--min-p", paramLabel = "P", description = "Default min-p (default: 0.05).")
    Double minP;

    @Option(names = "--repeat-penalty", paramLabel = "X", description = "Default repetition penalty (default: 1, off).")
    Double repeatPenalty;

    @Option(names = "--seed", paramLabel = "S",
            description = "Default seed of requests that give none (default: -1, a fresh one each).")
    Long seed;

    @Option(names = {"-n", "--n-predict"}, paramLabel = "N",
            description = "Default most tokens per answer (default: -1, as many as the context leaves).")
    Integer nPredict;

    @Option(names = "--accept-any-model", description = "Answer a request that names any model with the served one,"
            + " as llama-server does (default: a name other than the model's id is a 404).")
    boolean acceptAnyModel;

    @Option(names = "--reasoning", paramLabel = "on|off|auto", description = "Whether chat templates think when a"
            + " request does not say (their enable_thinking; default: auto, as on: a template that can think does).")
    String reasoning;

    @Option(names = "--chat-template", paramLabel = "TEMPLATE", description = "A Jinja chat template's source to use"
            + " instead of the model's, or a name llama-server knows: chatml, llama3, command-r, phi3 (the same as"
            + " --opt chat-template=TEMPLATE).")
    String chatTemplate;

    @Option(names = "--chat-template-file", paramLabel = "FILE", description = "A Jinja chat template to use instead"
            + " of the model's (the same as --opt chat-template-file=FILE).")
    Path chatTemplateFile;

    @Option(names = "--metrics", description = "Serve llama-server's metrics at GET /metrics (Laneway's own are"
            + " always at /q/metrics).")
    boolean metricsEndpoint;

    @Option(names = "--metrics-open", description = "Serve /metrics (as --metrics) and let the metrics (/metrics,"
            + " /q/metrics) be read without the API key, for scrapers inside a cluster; everything else still needs it.")
    boolean metricsOpen;

    @Option(names = "--verbose", description = "Add llama-server's __verbose to each whole chat and completion answer:"
            + " the prompt as the model read it, the sampling used, how it stopped.")
    boolean verbose;

    @Option(names = "--no-slots", description = "Answer GET /slots with 501, as llama-server's --no-slots.")
    boolean noSlots;

    @Option(names = "--embeddings", description = "Answer POST /v1/embeddings and /embeddings: each input's hidden"
            + " states after the final norm, pooled (--pooling) and normalised.")
    boolean embeddings;

    @Option(names = "--pooling", paramLabel = "mean|cls|last|rank", description = "How embeddings pool a prompt's"
            + " hidden states (default: as the model declares it, else mean); rank is a reranker's, for /v1/rerank;"
            + " needs --embeddings.")
    String pooling;

    @Option(names = {"--reranking", "--rerank"}, description = "Answer POST /v1/rerank and /rerank with a reranker"
            + " model's relevance scores, as llama-server's --reranking: --embeddings with --pooling rank.")
    boolean reranking;

    @Option(names = "--slot-save-path", paramLabel = "DIR", description = "Allow POST /slots/ID?action=save|restore"
            + " with file names in DIR (made if missing), as llama-server's --slot-save-path; erase needs it too.")
    Path slotSavePath;

    @Option(names = "--context-shift", description = "Let a generation that fills its context go on: half of what"
            + " follows the prompt's first n_keep tokens is dropped from its KV cache (default: it ends there).")
    boolean contextShift;

    @Option(names = "--tags", paramLabel = "TAG[,TAG...]", split = ",",
            description = "Words that describe the model, listed with it in /v1/models.")
    List<String> tags;

    @Option(names = "--sleep-idle-seconds", paramLabel = "N", description = "Close the model after N seconds in which"
            + " no request used it, giving its memory back; the next request opens it again (default: -1, never).")
    Integer sleepIdleSeconds;

    @Option(names = "--keep-alive", paramLabel = "DURATION", description = "As --sleep-idle-seconds, written as Ollama's"
            + " keep-alive: seconds or a duration such as 5m or 1h30m (at least 1 s), or -1 (never).")
    String keepAlive;

    @Option(names = "--lora", paramLabel = "NAME=PATH", description = "Serve a LoRA adapter of the model (a GGUF"
            + " adapter file or a PEFT directory) as model NAME; repeatable. Requests that name it apply it"
            + " (docs/lora.md).")
    List<String> lora;

    @Option(names = "--lora-dir", paramLabel = "DIR", description = "Let POST /v1/load_lora_adapter load adapters at"
            + " run time, from DIR only.")
    Path loraDir;

    @Option(names = "--models-dir", paramLabel = "DIR", description = "Serve every model in DIR too (container"
            + " directories, .gguf files, checkpoints), each named by its file or folder and loaded on first use.")
    Path modelsDir;

    @Option(names = "--models-preset", paramLabel = "FILE", description = "An INI file with a [section] per model:"
            + " model = PATH, alias, opt = KEY=VALUE, streams, keep-alive, pinned, load-on-startup, tags"
            + " (docs/models.md).")
    Path modelsPreset;

    @Option(names = {"--max-models", "--models-max"}, paramLabel = "N", description = "Load at most N models at once,"
            + " unloading the least recently used idle one first (default: 0, as many as --memory-budget holds).")
    Integer maxModels;

    @Option(names = "--memory-budget", paramLabel = "SIZE", description = "What the loaded models' files may take"
            + " together, as 12G, 800M or MiB alone; a load that would pass it unloads the least recently used idle"
            + " models first (default: the machine's memory).")
    String memoryBudget;

    @Option(names = "--no-webui", description = "Serve no chat page at / (a 404 there).")
    boolean noWebui;

    @Option(names = {"--cache-ram", "-cram"}, paramLabel = "MiB", description = "Keep what the streams' KV caches held"
            + " before new prompts overwrote them in up to MiB of memory, so that a returning conversation is not"
            + " computed again, as llama-server's --cache-ram (default 8192; 0: none; -1: as much as the heap"
            + " spares). The same as --opt cache-ram=MiB.")
    Long cacheRam;

    @Option(names = "--spec-type", paramLabel = "TYPE", description = "Speculative decoding as llama-server names it:"
            + " ngram-simple drafts by prompt lookup, up to --draft-max tokens per step (the same as --opt"
            + " lookup=N); other types (a draft model, n-gram caches) are refused.")
    String specType;

    @Option(names = {"--draft-max", "--draft", "--draft-n"}, paramLabel = "N", description = "The most tokens"
            + " drafted per step with --spec-type ngram-simple (default 16, as llama-server's).")
    Integer draftMax;

    @Spec
    CommandSpec spec;

    /** llama-server's speculative flags as the engine's {@code lookup} option: prompt lookup is the one kind here. */
    RouteOptions speculative(RouteOptions options) {
        if (specType == null) {
            if (draftMax != null) {
                throw new UsageException("--draft-max needs --spec-type ngram-simple: Laneway drafts by prompt lookup"
                        + " and runs no draft model");
            }
            return options;
        }
        if (!specType.equals("ngram-simple")) {
            throw new UsageException("--spec-type " + specType + ": Laneway drafts by prompt lookup only"
                    + " (ngram-simple)");
        }
        int n = draftMax == null ? 16 : draftMax;
        if (n < 0) {
            throw new UsageException("--draft-max " + n + ": expected 0 or more tokens per step");
        }
        return options.withOpt("lookup", Integer.toString(n));
    }

    @Override
    public Integer call() {
        RouteOptions options = model.routeOptions();
        if (keepAlive != null) {
            if (sleepIdleSeconds != null) {
                throw new UsageException("give --keep-alive or --sleep-idle-seconds, not both: they are one setting");
            }
            java.time.Duration d = dev.laneway.runtime.serve.KeepAlive.parse(keepAlive).orElseThrow(() ->
                    new UsageException("--keep-alive must be seconds or a duration such as 5m, or -1, was "
                            + keepAlive));
            if (!d.isNegative() && d.toSeconds() < 1) {
                throw new UsageException("--keep-alive must be at least 1 s, or -1 (never), was " + keepAlive);
            }
            sleepIdleSeconds = d.isNegative() ? -1 : (int) Math.min(Integer.MAX_VALUE, d.toSeconds());
        }
        if (sleepIdleSeconds != null && (sleepIdleSeconds == 0 || sleepIdleSeconds < -1)) {
            throw new UsageException("--sleep-idle-seconds must be at least 1, or -1 (never), was " + sleepIdleSeconds);
        }
        if (lora != null) {
            for (String entry : lora) {
                int eq = entry.indexOf('=');
                if (eq < 1 || eq == entry.length() - 1) {
                    throw new UsageException("--lora takes NAME=PATH (the adapter's model id, its GGUF file or PEFT"
                            + " directory), was '" + entry + "'");
                }
            }
        }
        if (loraDir != null && !java.nio.file.Files.isDirectory(loraDir)) {
            throw new UsageException("--lora-dir " + loraDir + " is not a directory");
        }
        if (tags != null && tags.stream().anyMatch(String::isBlank)) {
            throw new UsageException("--tags must not hold a blank tag");
        }
        if (port < 0 || port > 65535) {
            throw new UsageException("--port must be between 0 and 65535, was " + port);
        }
        if (apiKey != null && apiKey.isBlank()) {
            throw new UsageException("--api-key must not be blank");
        }
        if (apiKey != null && apiKeyFile != null) {
            throw new UsageException("give --api-key or --api-key-file, not both");
        }
        checkSampling();
        if (reasoning != null && !List.of("on", "off", "auto").contains(reasoning)) {
            throw new UsageException("--reasoning must be on, off or auto, was " + reasoning);
        }
        if (chatTemplate != null) {
            options = options.withOpt("chat-template", chatTemplate);
        }
        if (chatTemplateFile != null) {
            options = options.withOpt("chat-template-file", chatTemplateFile.toAbsolutePath().toString());
        }
        if (cacheRam != null) {
            options = options.withOpt("cache-ram", Long.toString(cacheRam));
        }
        options = speculative(options);
        if (reranking) {
            if (pooling != null && !pooling.equalsIgnoreCase("rank")) {
                throw new UsageException("--reranking pools as rank; --pooling " + pooling + " contradicts it");
            }
            embeddings = true;
            pooling = "rank";
        }
        if (pooling != null) {
            if (!embeddings) {
                throw new UsageException("--pooling is for --embeddings");
            }
            try {
                dev.laneway.spi.Pooling.of(pooling);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--pooling must be mean, cls, last or rank, was " + pooling);
            }
        }
        if (slotSavePath != null) {
            try {
                java.nio.file.Files.createDirectories(slotSavePath);
            } catch (java.io.IOException e) {
                throw new UsageException("--slot-save-path: cannot make the directory " + slotSavePath + " ("
                        + e.getMessage() + ")");
            }
        }
        if (apiKeyFile != null) {
            try {
                ApiKeyFilter.readKey(apiKeyFile);
            } catch (IllegalStateException e) {
                throw new UsageException("--api-key-file: " + e.getMessage());
            }
        }
        checkModels(options);
        settings(options).forEach(System::setProperty);
        AtomicInteger exitCode = new AtomicInteger();
        PrintWriter err = spec.commandLine().getErr();
        Quarkus.run(ServeApplication.class, (code, failure) -> {
            exitCode.set(code);
            if (failure != null) {
                // A server that cannot start (its configuration, its port) says why in one line.
                err.println("laneway serve: cannot start: " + rootCause(failure));
                err.flush();
            }
        }, new String[0]);
        return exitCode.get();
    }

    /**
     * The models, checked before anything binds or opens: each {@code -m} must be a model, and a directory one its
     * route accepts (a .gguf file or a checkpoint is checked once it is packed; the models of --models-dir and the
     * preset as the server starts).
     */
    private void checkModels(RouteOptions options) {
        if (model.models.isEmpty() && modelsDir == null && modelsPreset == null) {
            throw new UsageException("Missing required option: '--model=MODEL' (or --models-dir DIR, --models-preset"
                    + " FILE)");
        }
        if (modelsDir != null && !java.nio.file.Files.isDirectory(modelsDir)) {
            throw new UsageException("--models-dir " + modelsDir + " is not a directory");
        }
        if (modelsPreset != null && !java.nio.file.Files.isRegularFile(modelsPreset)) {
            throw new UsageException("--models-preset " + modelsPreset + " is not a file");
        }
        if (maxModels != null && maxModels < 0) {
            throw new UsageException("--max-models must be at least 0, was " + maxModels);
        }
        if (memoryBudget != null) {
            memoryBudgetMib();
        }
        List<ModelLocator.Located> located = new java.util.ArrayList<>();
        for (Path path : model.models) {
            try {
                located.add(ModelLocator.locate(path));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        for (ModelLocator.Located l : located) {
            if (l instanceof ModelLocator.Directory dir) {
                DispatchReport report = new Dispatcher(RouteSetup.catalog()).dispatch(dir.dir(), options);
                if (report.refusal().isPresent()) {
                    throw new UsageException(report.refusal().get());
                }
            }
        }
    }

    private static final java.util.regex.Pattern SIZE =
            java.util.regex.Pattern.compile("(?i)(\\d+(?:\\.\\d+)?)\\s*(?:([kmgt])i?b?)?");

    /** {@code --memory-budget} in MiB: a number with K, M, G or T (binary units, B or iB optional), else MiB. */
    private long memoryBudgetMib() {
        java.util.regex.Matcher m = SIZE.matcher(memoryBudget.strip());
        if (!m.matches()) {
            throw new UsageException("--memory-budget must be a size such as 12G or 800M, was " + memoryBudget);
        }
        double mib = Double.parseDouble(m.group(1)) * switch (m.group(2) == null ? "m"
                : m.group(2).toLowerCase(java.util.Locale.ROOT)) {
            case "k" -> 1.0 / 1024;
            case "g" -> 1024;
            case "t" -> 1024 * 1024;
            default -> 1;
        };
        if (mib < 1) {
            throw new UsageException("--memory-budget must be at least 1 MiB, was " + memoryBudget);
        }
        return (long) mib;
    }

    /** The sampling defaults, checked as a request's fields are. */
    private void checkSampling() {
        if (temperature != null && !(temperature >= 0 && Double.isFinite(temperature))) {
            throw new UsageException("--temp must be a number of at least 0, was " + temperature);
        }
        if (topP != null && !(topP > 0 && topP <= 1)) {
            throw new UsageException("--top-p must be in (0, 1], was " + topP);
        }
        if (minP != null && !(minP >= 0 && minP <= 1)) {
            throw new UsageException("--min-p must be in [0, 1], was " + minP);
        }
        if (repeatPenalty != null && !(repeatPenalty > 0 && Double.isFinite(repeatPenalty))) {
            throw new UsageException("--repeat-penalty must be above 0, was " + repeatPenalty);
        }
        if (nPredict != null && nPredict != -1 && nPredict < 1) {
            throw new UsageException("--n-predict must be -1 or at least 1, was " + nPredict);
        }
    }

    /** The innermost cause's message, its lines joined: what Quarkus wraps in "Failed to start quarkus". */
    static String rootCause(Throwable failure) {
        Throwable c = failure;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String message = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** The command line as {@code laneway.*} and {@code quarkus.http.*} configuration properties. */
    Map<String, String> settings(RouteOptions options) {
        Map<String, String> settings = new java.util.LinkedHashMap<>();
        if (!model.models.isEmpty()) {
            settings.put("laneway.model", model.models.stream().map(p -> escaped(p.toAbsolutePath().toString()))
                    .collect(Collectors.joining(",")));
        }
        if (lora != null) {
            settings.put("laneway.lora", lora.stream().map(e -> {
                int eq = e.indexOf('=');
                return escaped(e.substring(0, eq) + "=" + Path.of(e.substring(eq + 1)).toAbsolutePath());
            }).collect(Collectors.joining(",")));
        }
        if (loraDir != null) {
            settings.put("laneway.lora-dir", loraDir.toAbsolutePath().toString());
        }
        if (modelsDir != null) {
            settings.put("laneway.models-dir", modelsDir.toAbsolutePath().toString());
        }
        if (modelsPreset != null) {
            settings.put("laneway.models-preset", modelsPreset.toAbsolutePath().toString());
        }
        putIfSet(settings, "laneway.max-models", maxModels);
        putIfSet(settings, "laneway.memory-budget-mib", memoryBudget == null ? null : memoryBudgetMib());
        if (!model.aliases().isEmpty()) {
            settings.put("laneway.alias", String.join(",", model.aliases()));
        }
        if (tags != null && !tags.isEmpty()) {
            settings.put("laneway.tags", String.join(",", tags));
        }
        if (sleepIdleSeconds != null && sleepIdleSeconds >= 0) {
            settings.put("laneway.sleep-idle-seconds", Integer.toString(sleepIdleSeconds));
        }
        settings.put("laneway.streams", Integer.toString(options.streams()));
        if (!options.opt().isEmpty()) {
            settings.put("laneway.opt", options.opt().entrySet().stream()
                    .map(e -> escaped(e.getKey() + "=" + e.getValue()))
                    .collect(Collectors.joining(",")));
        }
        options.laya().ifPresent(l -> settings.put("laneway.laya", l.toAbsolutePath().toString()));
        settings.put("laneway.device", options.device());
        if (apiKey != null) {
            settings.put("laneway.api-key", apiKey);
        }
        if (apiKeyFile != null) {
            settings.put("laneway.api-key-file", apiKeyFile.toAbsolutePath().toString());
        }
        if (corsOrigins != null && !corsOrigins.isEmpty()) {
            settings.put("laneway.cors.origins", String.join(",", corsOrigins));
        }
        putIfSet(settings, "laneway.sampling.temperature", temperature);
        putIfSet(settings, "laneway.sampling.top-k", topK == null ? null : Math.max(0, topK));
        putIfSet(settings, "laneway.sampling.top-p", topP);
        putIfSet(settings, "laneway.sampling.min-p", minP);
        putIfSet(settings, "laneway.sampling.repeat-penalty", repeatPenalty);
        putIfSet(settings, "laneway.sampling.seed", seed);
        putIfSet(settings, "laneway.sampling.n-predict", nPredict);
        if (acceptAnyModel) {
            settings.put("laneway.accept-any-model", "true");
        }
        if (reasoning != null) {
            settings.put("laneway.reasoning", reasoning);
        }
        if (metricsEndpoint || metricsOpen) {
            settings.put("laneway.metrics-endpoint", "true");
        }
        if (metricsOpen) {
            settings.put("laneway.metrics-open", "true");
        }
        if (noSlots) {
            settings.put("laneway.slots-endpoint", "false");
        }
        if (embeddings) {
            settings.put("laneway.embeddings", "true");
        }
        if (contextShift) {
            settings.put("laneway.context-shift", "true");
        }
        if (pooling != null) {
            settings.put("laneway.pooling", pooling);
        }
        if (slotSavePath != null) {
            settings.put("laneway.slot-save-path", slotSavePath.toAbsolutePath().toString());
        }
        if (verbose) {
            settings.put("laneway.verbose", "true");
        }
        if (noWebui) {
            settings.put("laneway.webui", "false");
        }
        settings.put("quarkus.http.host", host);
        settings.put("quarkus.http.port", Integer.toString(port));
        vertex(System.getenv(), settings);
        return settings;
    }

    /**
     * Where Vertex AI runs the server ({@code AIP_MODE=PREDICTION}), its variables choose the port
     * ({@code AIP_HTTP_PORT}, over {@code --port}), the predict route and the health route.
     */
    static void vertex(Map<String, String> env, Map<String, String> settings) {
        if (!"PREDICTION".equals(env.get("AIP_MODE"))) {
            return;
        }
        settings.put("laneway.vertex.enabled", "true");
        String port = env.getOrDefault("AIP_HTTP_PORT", "8080");
        try {
            int p = Integer.parseInt(port.strip());
            if (p < 0 || p > 65535) {
                throw new NumberFormatException();
            }
            settings.put("quarkus.http.port", Integer.toString(p));
        } catch (NumberFormatException e) {
            throw new UsageException("AIP_HTTP_PORT must be a port number, was " + port);
        }
        route(env, "AIP_PREDICT_ROUTE").ifPresent(r -> settings.put("laneway.vertex.predict-route", r));
        route(env, "AIP_HEALTH_ROUTE").ifPresent(r -> settings.put("laneway.vertex.health-route", r));
    }

    /** A route from the environment, with the leading slash Vertex AI may leave out. */
    private static java.util.Optional<String> route(Map<String, String> env, String name) {
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            return java.util.Optional.empty();
        }
        String route = value.strip();
        return java.util.Optional.of(route.startsWith("/") ? route : "/" + route);
    }

    /** A list element as configuration reads it: its commas and backslashes escaped. */
    private static String escaped(String element) {
        return element.replace("\\", "\\\\").replace(",", "\\,");
    }

    private static void putIfSet(Map<String, String> settings, String key, Object value) {
        if (value != null) {
            settings.put(key, value.toString());
        }
    }
}
