package dev.laneway.runtime.serve;

import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.runtime.routes.DispatchReport;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.PackCache;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.runtime.routes.Verdict;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Opens a model through the route that claims it, packing a GGUF file or a checkpoint into the cache first. */
@ApplicationScoped
public class RouteModelOpener implements ModelOpener {
    private static final Logger LOG = Logger.getLogger(RouteModelOpener.class);

    @Inject
    LanewayConfig config;

    @Override
    public ServedModel open(ModelSpec spec) throws Exception {
        ModelLocator.Located located = ModelLocator.locate(spec.path());
        RouteOptions options = spec.options();
        Path dir = located instanceof ModelLocator.Directory d ? d.dir()
                : new PackCache(RouteSetup.cacheDir()).containerFor((ModelLocator.Packable) located, PackProgress.NONE);
        DispatchReport report = new Dispatcher(RouteSetup.catalog()).dispatch(dir, options);
        for (Verdict v : report.declines()) {
            LOG.infof("route '%s' declines %s: %s", v.route().name(), dir, v.reason());
        }
        if (report.refusal().isPresent()) {
            throw new DispatchException(report.refusal().get());
        }
        Route route = report.serving().orElseThrow();
        LOG.infof("route '%s' serves %s", route.name(), dir);
        Map<String, String> settings = new HashMap<>();
        settings.put(RouteContext.WATCHDOG_SECONDS, Integer.toString(config.watchdog().seconds()));
        settings.put(RouteContext.FAULT_RETRIES, Integer.toString(config.faults().retries()));
        settings.put(RouteContext.FAULT_RETRY_SECONDS, Integer.toString(config.faults().retrySeconds()));
        settings.put(RouteContext.FAULT_PROBE_SECONDS, Integer.toString(config.faults().probeSeconds()));
        config.deviceLock().ifPresent(lock -> settings.put(RouteContext.DEVICE_LOCK, lock));
        return route.open(dir, options, new RouteContext(RouteSetup.cacheDir(), settings));
    }
}
