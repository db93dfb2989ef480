package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.PackCache;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** Turns a located model into the container directory routes are asked about, packing its source if needed. */
final class ContainerPaths {
    private ContainerPaths() {
    }

    static Path containerDir(ModelLocator.Located located, PrintWriter log) {
        if (located instanceof ModelLocator.Directory d) {
            return d.dir();
        }
        ModelLocator.Packable source = (ModelLocator.Packable) located;
        try {
            PackCache cache = new PackCache(RouteSetup.cacheDir());
            if (cache.current(source).isEmpty()) {
                log.println("packing " + source.path() + " into " + cache.containerDir(source));
                log.flush();
            }
            return cache.containerFor(source, new ProgressPrinter(log));
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }
}
