package dev.laneway.route.dx;

import dev.laneway.engine.kernels.natives.NativeCpu;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.LaneKernels;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.model.EngineOptions;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteException;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The private dx route: serves containers of dense llama-family models (llama, mistral, qwen2, qwen3, with the plan
 * {@code ./laneway pack} writes for them) through the fused forward, each layer one native call. It is asked first and
 * is optional: a directory it cannot serve, or an option it cannot honour, makes it step aside with its reason, and the
 * next route serves the directory as if dx were absent.
 *
 * <p>Options: {@code --alias}, {@code --streams}, and the keys {@code dx} ({@code auto}, the default; {@code off}: step
 * aside; {@code on}: dx must serve, and whatever it cannot honour is refused fatally), {@code threads}, {@code ctx},
 * {@code batch}, {@code kv} and {@code kernels} (native code paths only), which mean what they mean for the generic
 * route. It runs on the host only: it cannot honour {@code --laya} nor a {@code --device} other than {@code cpu}.
 */
public final class DxRoute implements Route {
    /** The route's name. */
    public static final String NAME = "dx";
    /** dx's own {@code --opt} key. */
    public static final String DX = "dx";
    private static final int PRIORITY = 100;
    private static final Set<String> KEYS = keys();

    /** What {@code --opt dx=...} asks for. */
    enum Mode { AUTO, ON, OFF }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** Optional unless {@code --opt dx=on} (or a {@code dx} value it cannot read, which must not pass silently). */
    @Override
    public boolean optional(RouteOptions options) {
        return mode(options).filter(m -> m != Mode.ON).isPresent();
    }

    @Override
    public Claim claim(Path dir, RouteOptions options) {
        Optional<Mode> mode = mode(options);
        if (mode.isEmpty()) {
            return declined("--opt dx=" + options.opt(DX).orElseThrow() + ": expected on, off or auto");
        }
        if (mode.get() == Mode.OFF) {
            return declined("--opt dx=off");
        }
        if (!Container.looksLikeOne(dir)) {
            return new Claim.Declined("not a container: dx serves packed dense llama-family models", false,
                    Set.of(DX));
        }
        Container container;
        try {
            container = Container.open(dir);
        } catch (IOException | RuntimeException e) {
            return declined("the container is not valid: " + e.getMessage());
        }
        String modelType = container.config().modelType();
        StandardPlans.Recognition plan = StandardPlans.recognise(modelType, container.plan());
        if (plan.variant().isEmpty()) {
            return declined(StandardPlans.architectures().contains(modelType)
                    ? "the container's plan is not one dx fuses: " + plan.difference()
                    : "model_type '" + modelType + "' is not an architecture dx fuses ("
                    + String.join(", ", StandardPlans.architectures()) + ")");
        }
        Optional<String> nativeProblem = NativeCpu.loadProblem();
        if (nativeProblem.isPresent()) {
            return declined("the native kernels cannot load here: " + nativeProblem.get());
        }
        if (mode.get() == Mode.AUTO) {
            Optional<Path> lane = LaneKernels.laneFor(dir, container.config());
            if (lane.isPresent()) {
                return declined("the directory carries a lane (" + lane.get() + "): the fast lane serves it"
                        + " (--opt dx=on to serve it with dx)");
            }
            Optional<OptionRefusal> refusal = refusal(options);
            if (refusal.isPresent()) {
                return declined(refusal.get().message(NAME));
            }
        }
        return Claim.mine(container.describe() + "; fused layers (" + describe(plan.variant().get()) + ")");
    }

    @Override
    public Set<String> optKeys() {
        return KEYS;
    }

    @Override
    public Optional<OptionRefusal> refusal(RouteOptions options) {
        if (options.laya().isPresent()) {
            return Optional.of(new OptionRefusal("--laya " + options.laya().get(),
                    "dx runs on the host only, without a router"));
        }
        Optional<String> kernels = options.opt("kernels").map(k -> k.trim().toLowerCase(Locale.ROOT));
        if (kernels.isPresent() && kernels.get().equals("java")) {
            return Optional.of(new OptionRefusal("--opt kernels=" + options.opt("kernels").get(),
                    "dx runs on the native kernels"));
        }
        if (!options.onHost()) {
            return Optional.of(new OptionRefusal("--device " + options.device(),
                    "dx runs on the host CPU only (--device " + RouteOptions.HOST_DEVICE + ")"));
        }
        return EngineOptions.refusal(options);
    }

    @Override
    public ServedModel open(Path dir, RouteOptions options, RouteContext context) throws RouteException {
        try {
            return ModelAssembly.fused(dir, options, NAME, context);
        } catch (IOException | PlanException | IllegalArgumentException e) {
            throw new RouteException("cannot open " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * A decline of a directory dx recognises. dx's own key counts as read, so {@code --opt dx=auto} does not reach
     * the route that serves next as an unknown key.
     */
    private static Claim declined(String reason) {
        return Claim.steppedAside(reason, DX);
    }

    static Optional<Mode> mode(RouteOptions options) {
        String v = options.opt(DX).orElse("auto").trim().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "auto" -> Optional.of(Mode.AUTO);
            case "on" -> Optional.of(Mode.ON);
            case "off" -> Optional.of(Mode.OFF);
            default -> Optional.empty();
        };
    }

    private static String describe(StandardPlans.Variant v) {
        String extras = v.qkvBias() ? "q/k/v biases, " : v.qkNorm() ? "per-head q/k norms, " : "";
        return extras + (v.ropeStyle() == Rope.Style.INTERLEAVED ? "interleaved" : "halves")
                + " rope, " + (v.tiedEmbeddings() ? "tied" : "separate") + " head";
    }

    private static Set<String> keys() {
        Set<String> keys = new HashSet<>(EngineOptions.KEYS);
        keys.add(DX);
        return Set.copyOf(keys);
    }
}
