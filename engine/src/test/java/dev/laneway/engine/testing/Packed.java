package dev.laneway.engine.testing;

import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.pack.CheckpointPacker;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The shared models packed into containers once per test JVM, in a temporary directory. */
public final class Packed {
    private static final Map<String, Path> PACKED = new HashMap<>();
    private static Path root;

    private Packed() {
    }

    /** stories260K's GGUF file packed with {@code quant} ({@code f32}, {@code q8}, {@code q4_1}, {@code bf16}). */
    public static synchronized Path stories260k(String quant) {
        return pack("stories260k-" + quant, Shared.stories260kGguf(), quant, false);
    }

    /** The tinystories-656k checkpoint packed with {@code quant}. */
    public static synchronized Path tinystories(String quant) {
        return pack("tinystories-" + quant, Shared.tinystoriesCheckpoint(), quant, false);
    }

    /**
     * A container opened through the per-op forward on the given kernels ({@code java} or {@code native}), or through
     * the fused forward on the native kernels ({@code fused}).
     */
    public static LanewayModel open(Path container, String kernels) {
        return open(container, kernels, RouteOptions.defaults());
    }

    /** As {@link #open(Path, String)}, with other route options (streams, a batch size, a KV precision). */
    public static LanewayModel open(Path container, String kernels, RouteOptions options) {
        try {
            if (kernels.equals("fused")) {
                return ModelAssembly.fused(container, options, "dx",
                        new RouteContext(Path.of(System.getProperty("java.io.tmpdir"))));
            }
            return ModelAssembly.perOp(container, options.withOpt("kernels", kernels), "generic");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies a container's files to a new directory {@code to}, for a test to change one of them. */
    public static void copy(Path container, Path to) throws IOException {
        Files.createDirectories(to);
        try (var files = Files.list(container)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
    }

    private static Path pack(String name, Path source, String quant, boolean lane) {
        return PACKED.computeIfAbsent(name, n -> {
            try {
                if (root == null) {
                    root = Files.createTempDirectory("laneway-packed");
                    root.toFile().deleteOnExit();
                }
                Path target = root.resolve(n);
                var packer = Files.isDirectory(source) ? new CheckpointPacker() : new GgufPacker();
                packer.pack(source, target, new PackOptions(Optional.of(quant), lane), PackProgress.NONE);
                return target;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
