package dev.laneway.route.generic;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.model.EngineOptions;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteException;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * The model-generic route: serves any valid container through the per-op forward, which executes the container's
 * plan ({@code plan.json}, or the plan of its {@code model_type}). It is asked last and claims every container it can read, so a valid container is never refused
 * for not being a special shape.
 */
public final class GenericRoute implements Route {

    @Override
    public String name() {
        return "generic";
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public boolean generic() {
        return true;
    }

    @Override
    public Claim claim(Path dir, RouteOptions options) {
        if (!Container.looksLikeOne(dir)) {
            return Claim.notMine("not a container: it needs model.q4nx, config.json and tokenizer.json"
                    + " (./laneway pack makes one from a .gguf file or a Hugging Face checkpoint)");
        }
        try {
            return Claim.mine(Container.open(dir).describe());
        } catch (IOException | RuntimeException e) {
            return Claim.cannotServe("the container is not valid: " + e.getMessage());
        }
    }

    @Override
    public Set<String> optKeys() {
        return EngineOptions.KEYS;
    }

    /** A malformed {@code --opt} value or an unknown device; {@code --laya} is honoured (see {@link #open}). */
    @Override
    public Optional<OptionRefusal> refusal(RouteOptions options) {
        return EngineOptions.refusal(options);
    }

    /** Opens the container; with {@code --laya}, on each candidate device behind the router. */
    @Override
    public ServedModel open(Path dir, RouteOptions options, RouteContext context) throws RouteException {
        try {
            return ModelAssembly.serve(dir, options, name(), context);
        } catch (IOException | PlanException | IllegalArgumentException e) {
            throw new RouteException("cannot open " + dir + ": " + e.getMessage(), e);
        }
    }
}
