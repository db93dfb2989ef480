package dev.laneway.engine.container;

import dev.laneway.engine.config.ModelConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a model directory's lane kernels are (docs/fastlane.md): {@code LANEWAY_KERNELS} (or the system property
 * {@code laneway.kernels}), else {@code <dir>/npu}, else the directory the build named in {@code laneway.kernels.dir}.
 */
public final class LaneKernels {
    /** The environment variable that points at a kernels directory. */
    public static final String ENV = "LANEWAY_KERNELS";
    /** The system property that does the same, for tests and embedding. */
    public static final String PROPERTY = "laneway.kernels";

    private LaneKernels() {
    }

    /** How a kernels directory was found. */
    public enum Source { ENVIRONMENT, MODEL_DIRECTORY, BUILD }

    /** A resolved kernels directory. */
    public record Resolved(Path dir, Source source) {
    }

    /**
     * The kernels directory for {@code modelDir}, if any of the three ways provides one.
     *
     * @param buildDir the build's {@code laneway.kernels.dir}, if it set one
     */
    public static Optional<Resolved> resolve(Path modelDir, Optional<Path> buildDir) {
        String configured = System.getProperty(PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(ENV);
        }
        if (configured != null && !configured.isBlank()) {
            return Optional.of(new Resolved(Path.of(configured), Source.ENVIRONMENT));
        }
        Path own = modelDir.resolve(Container.LANE_DIR);
        if (Files.isDirectory(own)) {
            return Optional.of(new Resolved(own, Source.MODEL_DIRECTORY));
        }
        return buildDir.filter(Files::isDirectory).map(d -> new Resolved(d, Source.BUILD));
    }

    /**
     * The kernels directory holding a lane for {@code config}'s shape that {@code modelDir} carries, through
     * {@code LANEWAY_KERNELS} or its own {@code npu/}: the directories the fast lane serves, which other routes leave
     * to it. A manifest that cannot be read or is for another shape does not count; the fast lane says why.
     */
    public static Optional<Path> laneFor(Path modelDir, ModelConfig config) {
        Optional<Resolved> resolved = resolve(modelDir, Optional.empty());
        if (resolved.isEmpty() || !Files.isRegularFile(resolved.get().dir().resolve(LaneManifest.FILE))) {
            return Optional.empty();
        }
        try {
            LaneManifest manifest = LaneManifest.read(resolved.get().dir());
            return manifest.mismatch(config).isEmpty() ? Optional.of(resolved.get().dir()) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Why a kernels directory without a lane manifest serves nothing, naming the three places a lane can come from:
     * {@value #ENV}, {@code <model dir>/npu} and the build's {@code laneway.kernels.dir}.
     */
    public static String withoutManifest(Resolved kernels) {
        String where = switch (kernels.source()) {
            case ENVIRONMENT -> ENV + " (or -D" + PROPERTY + ") is " + kernels.dir();
            case MODEL_DIRECTORY -> "the model's own " + Container.LANE_DIR + "/ directory " + kernels.dir();
            case BUILD -> "the build's laneway.kernels.dir is " + kernels.dir();
        };
        return where + ", which has no " + LaneManifest.FILE + ": a lane comes from " + ENV + " (which is looked at"
                + " first, and hides the rest when set), else <model dir>/" + Container.LANE_DIR + "/" + LaneManifest.FILE
                + " (./laneway pack --lane writes one), else the directory the build named in -Dlaneway.kernels.dir";
    }

    /** How to provide a kernels directory, for refusals. */
    public static String howToProvide() {
        return "set " + ENV + " to a kernels directory, add <model dir>/" + Container.LANE_DIR
                + "/lane.json (./laneway pack --lane writes one), or build with -Dlaneway.kernels.dir=DIR";
    }
}
