package dev.laneway.engine.model;

import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.lane.DeviceRegistry;
import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.RouteOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The {@code --opt} keys of the engine's routes and their checks: {@code threads} (kernel threads),
 * {@code ctx} (context length), {@code batch} (prompt tokens per forward call) and {@code kernels}
 * ({@code java}, {@code native}, {@code native-avx2}, ...), {@code kv} (the KV cache's precision, {@code f16} as
 * llama.cpp keeps it, {@code f32}, or {@code q8}: llama.cpp's {@code q8_0} blocks, as its {@code -ctk q8_0 -ctv
 * q8_0}, for models whose heads are whole 32-element blocks), {@code chat-template-file} (a Jinja chat template to use instead of the
 * model's, as llama-server's {@code --chat-template-file}) and {@code chat-template} (the template's source itself, or
 * a name of {@link ChatTemplate#NAMED}, as llama-server's {@code --chat-template}) and {@code cache-ram} (MiB of host
 * memory that keep what streams' KV caches held before new prompts overwrote them, as llama-server's
 * {@code --cache-ram}: 0 none, -1 as much as the heap spares; by default 8192) and {@code lookup} (prompt lookup
 * decoding: up to that many tokens per step drafted from the prompt and the text so far and verified in the same
 * forward, as llama-server's {@code --draft-max} with n-gram drafting; 0, the default, none).
 *
 * @param threads  kernel threads, or empty for one per core
 * @param context  context length, or empty for the model's (at most {@link #DEFAULT_MAX_CONTEXT})
 * @param batch    prompt tokens per forward call
 * @param kernels  the kernels asked for, or empty to choose
 * @param kv       the KV cache's precision
 * @param chatTemplate the chat template's source, from {@code chat-template} or {@code chat-template-file}; empty:
 *                     the model's own
 * @param cacheRam     bytes of the host-memory prompt cache
 * @param lookup       the most tokens drafted by prompt lookup per step
 */
public record EngineOptions(OptionalInt threads, OptionalInt context, int batch, Optional<String> kernels,
                            KvCache.Precision kv, Optional<String> chatTemplate, long cacheRam, int lookup) {
    /** The keys. */
    public static final Set<String> KEYS = Set.of("threads", "ctx", "batch", "kernels", "kv", "chat-template",
            "chat-template-file", "cache-ram", "lookup");
    /** The most tokens {@code lookup} may draft per step. */
    public static final int MAX_LOOKUP = 64;
    /** The host-memory prompt cache when {@code cache-ram} is not given: llama-server's default. */
    public static final long DEFAULT_CACHE_RAM_MIB = 8192;
    /** The context used when the model's own is longer and {@code ctx} is not given. */
    public static final int DEFAULT_MAX_CONTEXT = 4096;
    /** Prompt tokens per forward call when {@code batch} is not given. */
    public static final int DEFAULT_BATCH = 128;
    private static final int MAX_BATCH = 4096;

    /**
     * Reads the keys from the options.
     *
     * @throws IllegalArgumentException with the refusal's text when a value is malformed
     */
    public static EngineOptions of(RouteOptions options) {
        return new EngineOptions(positive(options, "threads", 1 << 10), positive(options, "ctx", 1 << 24),
                positive(options, "batch", MAX_BATCH).orElse(DEFAULT_BATCH), options.opt("kernels"), kv(options),
                chatTemplate(options), cacheRam(options), lookup(options));
    }

    private static int lookup(RouteOptions options) {
        String v = options.opt("lookup").orElse("0").trim();
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= MAX_LOOKUP) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--opt lookup=" + v + ": expected 0 (none) to " + MAX_LOOKUP
                + " tokens drafted per step");
    }

    private static long cacheRam(RouteOptions options) {
        String v = options.opt("cache-ram").orElse(Long.toString(DEFAULT_CACHE_RAM_MIB)).trim();
        try {
            long mib = Long.parseLong(v);
            if (mib == -1) {
                return Long.MAX_VALUE;  // the cache still leaves the heap an eighth of itself
            }
            if (mib >= 0 && mib <= 1L << 30) {
                return mib << 20;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--opt cache-ram=" + v + ": expected MiB, 0 for none or -1 for no limit");
    }

    private static Optional<String> chatTemplate(RouteOptions options) {
        Optional<String> file = options.opt("chat-template-file");
        Optional<String> inline = options.opt("chat-template");
        if (inline.isPresent()) {
            if (file.isPresent()) {
                throw new IllegalArgumentException("--opt chat-template: give chat-template or chat-template-file,"
                        + " not both");
            }
            String source = inline.get();
            if (ChatTemplate.NAMED.containsKey(source)) {
                return Optional.of(ChatTemplate.NAMED.get(source));
            }
            // llama-server knows more templates by name (gemma, mistral-v7, ...); a name is not a template's source.
            if (source.isBlank() || source.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("--opt chat-template: '" + source + "' is not a Jinja template;"
                        + " of llama-server's built-in names " + String.join(", ", new java.util.TreeSet<>(
                        ChatTemplate.NAMED.keySet())) + " are known here (give the template's source, or"
                        + " chat-template-file)");
            }
            return Optional.of(source);
        }
        if (file.isEmpty()) {
            return Optional.empty();
        }
        try {
            String source = Files.readString(Path.of(file.get()));
            if (source.isBlank()) {
                throw new IllegalArgumentException("--opt chat-template-file=" + file.get() + ": the file is empty");
            }
            return Optional.of(source);
        } catch (IOException | InvalidPathException e) {
            throw new IllegalArgumentException("--opt chat-template-file=" + file.get() + ": cannot read it ("
                    + e.getClass().getSimpleName() + ")");
        }
    }

    /** The context length for a model trained on {@code trained} positions. */
    public int contextFor(int trained) {
        return context.orElse(Math.min(trained, DEFAULT_MAX_CONTEXT));
    }

    /**
     * The first option of these the engine cannot honour: a malformed {@code --opt} value or an unknown device.
     * Constructing a device object opens nothing.
     */
    public static Optional<OptionRefusal> refusal(RouteOptions options) {
        try {
            of(options);
        } catch (IllegalArgumentException e) {
            return Optional.of(new OptionRefusal(e.getMessage().split(":")[0], e.getMessage()
                    .substring(e.getMessage().indexOf(':') + 1).trim()));
        }
        try {
            DeviceRegistry.discover().open(options.device());
        } catch (IllegalArgumentException e) {
            return Optional.of(new OptionRefusal("--device " + options.device(), e.getMessage()));
        }
        return Optional.empty();
    }

    private static KvCache.Precision kv(RouteOptions options) {
        String v = options.opt("kv").orElse("f16");
        return switch (v) {
            case "f16" -> KvCache.Precision.F16;
            case "f32" -> KvCache.Precision.F32;
            case "q8" -> KvCache.Precision.Q8;
            default -> throw new IllegalArgumentException("--opt kv=" + v + ": expected f16, f32 or q8");
        };
    }

    private static OptionalInt positive(RouteOptions options, String key, int max) {
        Optional<String> v = options.opt(key);
        if (v.isEmpty()) {
            return OptionalInt.empty();
        }
        try {
            int n = Integer.parseInt(v.get().trim());
            if (n >= 1 && n <= max) {
                return OptionalInt.of(n);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--opt " + key + "=" + v.get() + ": expected a whole number from 1 to " + max);
    }
}
