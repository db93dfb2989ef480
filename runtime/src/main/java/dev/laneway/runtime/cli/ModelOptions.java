package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.spi.RouteOptions;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The options that choose a model and how its route serves it, shared by the subcommands that open a model. */
public final class ModelOptions {

    @Option(names = {"-m", "--model"}, paramLabel = "MODEL", description = "Model directory, model.q4nx file, .gguf"
            + " file or Hugging Face checkpoint directory; serve takes several (-m A -m B), the first its default.")
    List<Path> models = new ArrayList<>();

    /** The one model a command that opens one is given. */
    Path model() {
        if (models.isEmpty()) {
            throw new UsageException("Missing required option: '--model=MODEL'");
        }
        if (models.size() > 1) {
            throw new UsageException("-m is given " + models.size() + " times; this command opens one model");
        }
        return models.get(0);
    }

    @Option(names = "--device", paramLabel = "DEVICE", defaultValue = RouteOptions.HOST_DEVICE,
            description = "Device to run on (default: ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--alias", paramLabel = "NAME[,NAME...]", description = "Model id that clients use (default: the"
            + " directory name); several, comma-separated: the first is the id, and requests may name any.")
    String alias;

    @Option(names = "--streams", paramLabel = "N", defaultValue = "1",
            description = "Generations that run at once (default: ${DEFAULT-VALUE}).")
    int streams;

    @Option(names = "--opt", paramLabel = "KEY=VALUE",
            description = "Route option, repeatable; a key given twice: the later wins.")
    List<String> opts = new ArrayList<>();

    @Option(names = "--laya", paramLabel = "PATH", description = "Laya router checkpoint directory.")
    Path laya;

    @Option(names = {"-ctk", "--cache-type-k"}, paramLabel = "TYPE", description = "The KV cache's keys as llama.cpp"
            + " names their type: f16 (default), f32 or q8_0; values the same (-ctv). The same as --opt kv=f16|f32|q8.")
    String cacheTypeK;

    @Option(names = {"-ctv", "--cache-type-v"}, paramLabel = "TYPE", description = "The KV cache's values: as -ctk.")
    String cacheTypeV;

    /** llama.cpp's cache types as the engine's {@code kv} option names them. */
    private static final Map<String, String> CACHE_TYPES = Map.of("f16", "f16", "f32", "f32", "q8_0", "q8");

    /** Where the model is, checked. */
    public ModelLocator.Located located() {
        try {
            return ModelLocator.locate(model());
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The options as a route sees them, checked. */
    public RouteOptions routeOptions() {
        if (streams < 1) {
            throw new UsageException("--streams must be at least 1, was " + streams);
        }
        if (device.isBlank()) {
            throw new UsageException("--device must name a device");
        }
        List<String> names = aliases();
        Map<String, String> parsed = parseOpts(opts);
        cacheType().ifPresent(kv -> {
            if (parsed.containsKey("kv") && !parsed.get("kv").equals(kv)) {
                throw new UsageException("--opt kv=" + parsed.get("kv") + " and -ctk/-ctv say two things: give one");
            }
            parsed.put("kv", kv);
        });
        return new RouteOptions(names.stream().findFirst(), streams, parsed, Optional.ofNullable(laya), device);
    }

    /**
     * The {@code kv} option that {@code -ctk} and {@code -ctv} ask for, if either is given: keys and values are kept
     * at one precision here, so they must name the same type (the one not given is llama.cpp's default, f16).
     */
    Optional<String> cacheType() {
        if (cacheTypeK == null && cacheTypeV == null) {
            return Optional.empty();
        }
        String k = cacheTypeK == null ? "f16" : cacheTypeK;
        String v = cacheTypeV == null ? "f16" : cacheTypeV;
        for (String[] t : new String[][] {{"-ctk", k}, {"-ctv", v}}) {
            if (!CACHE_TYPES.containsKey(t[1])) {
                throw new UsageException(t[0] + " " + t[1] + ": Laneway keeps the KV cache as f16, f32 or q8_0");
            }
        }
        if (!k.equals(v)) {
            throw new UsageException("-ctk " + k + " with -ctv " + v + ": Laneway keeps keys and values at one"
                    + " precision; give both the same type");
        }
        return Optional.of(CACHE_TYPES.get(k));
    }

    /** The names {@code --alias} gives, the id first; none when it is not given. */
    List<String> aliases() {
        if (alias == null) {
            return List.of();
        }
        List<String> names = java.util.Arrays.stream(alias.split(",", -1)).map(String::strip).toList();
        if (names.stream().anyMatch(String::isEmpty)) {
            throw new UsageException("--alias must not be blank, nor hold a blank name between commas");
        }
        return names;
    }

    /** {@code KEY=VALUE} pairs in order; a key given twice keeps its later value. */
    static Map<String, String> parseOpts(List<String> opts) {
        Map<String, String> parsed = new LinkedHashMap<>();
        for (String opt : opts) {
            int eq = opt.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--opt " + opt + ": expected KEY=VALUE");
            }
            String key = opt.substring(0, eq).trim();
            if (key.isEmpty()) {
                throw new UsageException("--opt " + opt + ": expected KEY=VALUE");
            }
            parsed.remove(key);
            parsed.put(key, opt.substring(eq + 1));
        }
        return parsed;
    }
}
