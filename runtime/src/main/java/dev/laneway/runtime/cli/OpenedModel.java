package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteException;
import dev.laneway.spi.ServedModel;

import java.io.PrintWriter;
import java.nio.file.Path;

/** Opens the model a subcommand's {@code -m} names, through the route that claims it. */
final class OpenedModel {
    private OpenedModel() {
    }

    static ServedModel open(ModelOptions options, PrintWriter log) {
        var routeOptions = ModelLocator.withDefaultAlias(options.located(), options.routeOptions());
        Path dir = ContainerPaths.containerDir(options.located(), log);
        try {
            return new Dispatcher(RouteSetup.catalog()).open(dir, routeOptions, new RouteContext(RouteSetup.cacheDir()));
        } catch (DispatchException e) {
            throw new UsageException(e.getMessage());
        } catch (RouteException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
