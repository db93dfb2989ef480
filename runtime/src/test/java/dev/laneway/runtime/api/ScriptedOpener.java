package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.ModelOpener;
import dev.laneway.runtime.serve.ModelSpec;
import dev.laneway.spi.ServedModel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A test tool: serves a {@link ScriptedModel} instead of opening a real one. With {@code scripted.hold-loading}
 * the model stays loading until a test opens {@link #LOADING}, and then has background work until a test opens
 * {@link #BACKGROUND}; with {@code scripted.routed} it routes requests
 * ({@link RoutingScriptedModel}).
 */
@Alternative
@ApplicationScoped
public class ScriptedOpener implements ModelOpener {
    static final CountDownLatch LOADING = new CountDownLatch(1);
    static final CountDownLatch BACKGROUND = new CountDownLatch(1);

    @Override
    public ServedModel open(ModelSpec spec) throws InterruptedException {
        boolean hold = ConfigProvider.getConfig().getOptionalValue("scripted.hold-loading", Boolean.class)
                .orElse(false);
        if (hold && !LOADING.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never let the model load");
        }
        if (hold) {
            ScriptedModel.background = BACKGROUND;
        }
        boolean routed = ConfigProvider.getConfig().getOptionalValue("scripted.routed", Boolean.class).orElse(false);
        return routed ? new RoutingScriptedModel() : new ScriptedModel(spec.id());
    }
}
