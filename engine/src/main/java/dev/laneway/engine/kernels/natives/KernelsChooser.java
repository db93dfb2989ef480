package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Kernels;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Chooses the kernels once, when a model is opened: what was asked for explicitly, else the native kernels on the
 * best code path the CPU runs, else (the library cannot load here) the Java kernels, saying so once.
 */
public final class KernelsChooser {
    private static final System.Logger LOG = System.getLogger(KernelsChooser.class.getName());
    private static final AtomicBoolean FALLBACK_REPORTED = new AtomicBoolean();

    /** The system property (and, as {@code LANEWAY_KERNEL_IMPL}, environment variable) read when nothing is explicit. */
    public static final String PROPERTY = "laneway.kernel-impl";

    private KernelsChooser() {
    }

    /** One thread per available core. */
    public static int defaultThreads() {
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * The kernels to run a model on.
     *
     * @param explicit {@code java}; {@code native} (best code path, and it must load); {@code scalar}, {@code avx2} or
     *                 {@code avx512} (that native path, optionally written {@code native-avx2}); empty: the
     *                 {@link #PROPERTY} setting, else native if it loads, else java
     * @param threads  threads for the native kernels' pool, the calling thread included
     */
    public static Kernels choose(Optional<String> explicit, int threads) {
        return choose(explicit, threads, NativeCpu.loadProblem());
    }

    /** {@link #choose(Optional, int)} with the native library's load problem given (tests pass one). */
    static Kernels choose(Optional<String> explicit, int threads, Optional<String> loadProblem) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive, got " + threads);
        }
        Optional<String> asked = explicit.or(KernelsChooser::configured).map(s -> s.trim().toLowerCase(Locale.ROOT));
        if (asked.isEmpty()) {
            if (loadProblem.isPresent()) {
                if (FALLBACK_REPORTED.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "native kernels unavailable ({0}); running on the Java "
                            + "kernels", loadProblem.get());
                }
                return new JavaKernels();
            }
            return announce(NativeKernels.create(threads));
        }
        String name = asked.get();
        if (name.equals("java")) {
            LOG.log(System.Logger.Level.INFO, "kernels: java (as asked)");
            return new JavaKernels();
        }
        String path = name.startsWith("native-") ? name.substring("native-".length()) : name;
        Optional<Isa> isa = path.equals("native") ? Optional.empty() : Optional.of(Isa.parse(path).orElseThrow(
                () -> new IllegalArgumentException("unknown kernels '" + name + "' (known: java, native, "
                        + "native-scalar, native-avx2, native-avx512)")));
        loadProblem.ifPresent(problem -> {
            throw new IllegalArgumentException("kernels '" + name + "' asked for, but the native library cannot load: "
                    + problem);
        });
        return announce(isa.isPresent() ? NativeKernels.create(isa.get(), threads) : NativeKernels.create(threads));
    }

    private static Optional<String> configured() {
        String p = System.getProperty(PROPERTY);
        if (p == null || p.isBlank()) {
            p = System.getenv("LANEWAY_KERNEL_IMPL");
        }
        return p == null || p.isBlank() ? Optional.empty() : Optional.of(p);
    }

    private static Kernels announce(NativeKernels kernels) {
        LOG.log(System.Logger.Level.INFO, "kernels: {0}, {1} threads, weights beyond the cache {2}{3}", kernels.name(),
                kernels.threads(), kernels.streaming().label(),
                NativeCpu.cpuHasAvx512Bf16() ? " (CPU has AVX-512 BF16)" : "");
        return kernels;
    }
}
