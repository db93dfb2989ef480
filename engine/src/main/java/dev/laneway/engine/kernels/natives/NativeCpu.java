package dev.laneway.engine.kernels.natives;

import org.bytedeco.javacpp.Loader;

import java.util.Optional;

/**
 * What the native library finds out about this CPU: whether the library loads at all, the best code path the CPU
 * runs, how it reads streamed weights fastest, and its last-level cache. The library is loaded on first use, and why
 * it could not be is remembered.
 */
public final class NativeCpu {
    private NativeCpu() {
    }

    /** Why the native library cannot be used on this machine, or empty when it can. */
    public static Optional<String> loadProblem() {
        return Optional.ofNullable(Library.PROBLEM);
    }

    /** The best code path this CPU runs. */
    public static Isa bestIsa() {
        requireLoaded();
        return Isa.values()[NativeLibrary.bestIsa()];
    }

    /** Whether the CPU also has AVX-512 BF16 (for logs: the BF16 kernels widen to float and do not need it). */
    public static boolean cpuHasAvx512Bf16() {
        requireLoaded();
        return NativeLibrary.hasAvx512Bf16();
    }

    /**
     * How weights that stream from memory are read fastest on this CPU: {@link Streaming#PREFETCHED_TO_L2} on AMD's
     * cores with AVX-512, {@link Streaming#PREFETCHED} elsewhere.
     */
    public static Streaming preferredStreaming() {
        requireLoaded();
        return Streaming.values()[NativeLibrary.preferredStreaming()];
    }

    /** The CPU's last-level cache, in bytes. */
    static long lastLevelCacheBytes() {
        requireLoaded();
        return NativeLibrary.lastLevelCacheBytes();
    }

    /** Fails with why the library cannot be used, when it cannot. */
    static void requireLoaded() {
        if (Library.PROBLEM != null) {
            throw new IllegalStateException("native kernels unavailable: " + Library.PROBLEM);
        }
    }

    /** Loads the library once, remembering why it failed. */
    private static final class Library {
        static final String PROBLEM = load();

        private static String load() {
            try {
                Loader.load(NativeLibrary.class);
                return null;
            } catch (Throwable t) {  // UnsatisfiedLinkError for an unsupported platform, or a broken extraction
                String message = String.valueOf(t.getMessage());
                if (t instanceof UnsatisfiedLinkError && message.startsWith("no jniNativeLibrary")) {
                    return "this jar has no native kernels for " + Loader.getPlatform();
                }
                return Loader.getPlatform() + ": " + t;
            }
        }
    }
}
