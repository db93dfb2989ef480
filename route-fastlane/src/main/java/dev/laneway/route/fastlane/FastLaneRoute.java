package dev.laneway.route.fastlane;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.LaneKernels;
import dev.laneway.engine.container.LaneManifest;
import dev.laneway.engine.model.EngineOptions;
import dev.laneway.engine.forward.OneSubmissionForward;
import dev.laneway.engine.model.ForwardCompiler;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.lane.DeviceRegistry;
import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteException;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

/**
 * The fast lane: serves container directories that carry a lane — a fixed set of kernels built for one model shape —
 * running each token as one submission (all layers, then the output head) on a device lane with a fresh context per
 * generation. The lane's kernels directory comes from {@code LANEWAY_KERNELS}, else {@code <dir>/npu}, else the
 * build's {@code laneway.kernels.dir}, and must hold a {@code lane.json} manifest whose shape matches
 * {@code config.json}. It is optional: a directory it cannot serve goes to the next route.
 */
public final class FastLaneRoute implements Route {
    private final Optional<Path> buildKernels = buildKernelsDir();

    @Override
    public String name() {
        return "fastlane";
    }

    @Override
    public int priority() {
        return 50;
    }

    @Override
    public boolean optional(RouteOptions options) {
        return true;
    }

    @Override
    public Claim claim(Path dir, RouteOptions options) {
        Optional<LaneKernels.Resolved> kernels = LaneKernels.resolve(dir, buildKernels);
        if (kernels.isEmpty()) {
            return Claim.notMine("no kernels directory: " + LaneKernels.howToProvide());
        }
        Path kernelsDir = kernels.get().dir();
        if (!Files.isRegularFile(kernelsDir.resolve(LaneManifest.FILE))) {
            return Claim.notMine(LaneKernels.withoutManifest(kernels.get()));
        }
        if (!Container.looksLikeOne(dir)) {
            return Claim.notMine("not a container (model.q4nx, config.json)");
        }
        try {
            LaneManifest manifest = LaneManifest.read(kernelsDir);
            Container container = Container.open(dir);
            Optional<String> mismatch = manifest.mismatch(container.config());
            if (mismatch.isPresent()) {
                return Claim.cannotServe("the lane in " + kernelsDir + " is for another shape: " + mismatch.get());
            }
            for (String file : manifest.kernels()) {
                if (!Files.isRegularFile(kernelsDir.resolve(file))) {
                    return Claim.cannotServe("the lane manifest lists kernel file " + file + ", missing from "
                            + kernelsDir);
                }
            }
            return Claim.mine("lane " + manifest.kernelSet() + " for " + manifest.device() + " from " + kernelsDir
                    + "; " + container.describe());
        } catch (IOException | RuntimeException e) {
            return Claim.cannotServe(e.getMessage());
        }
    }

    @Override
    public Set<String> optKeys() {
        return EngineOptions.KEYS;
    }

    @Override
    public Optional<OptionRefusal> refusal(RouteOptions options) {
        return EngineOptions.refusal(options);
    }

    @Override
    public ServedModel open(Path dir, RouteOptions options, RouteContext context) throws RouteException {
        try {
            LaneManifest manifest = LaneManifest.read(LaneKernels.resolve(dir, buildKernels).orElseThrow().dir());
            String kind = DeviceRegistry.discover().open(options.device()).kind();
            if (!manifest.device().equals(kind)) {
                throw new RouteException("the lane's kernels are for device kind " + manifest.device()
                        + ", and --device " + options.device() + " is a " + kind);
            }
            return ModelAssembly.serve(dir, options, name(), context, ForwardCompiler.FUSED_WHERE_POSSIBLE,
                    OneSubmissionForward::new);
        } catch (IOException | RuntimeException e) {
            throw new RouteException("cannot open " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The build's {@code laneway.kernels.dir}, if it named one. */
    private static Optional<Path> buildKernelsDir() {
        try (InputStream in = FastLaneRoute.class.getResourceAsStream("build.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            String dir = p.getProperty("kernels.dir", "").trim();
            return dir.isEmpty() || dir.startsWith("${") ? Optional.empty() : Optional.of(Path.of(dir));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
