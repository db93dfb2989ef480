package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.GgufCache;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** Turns a located model into the container directory routes are asked about, packing a GGUF file if needed. */
final class ContainerPaths {
    private ContainerPaths() {
    }

    static Path containerDir(ModelLocator.Located located, PrintWriter log) {
        if (located instanceof ModelLocator.Directory d) {
            return d.dir();
        }
        Path gguf = ((ModelLocator.Gguf) located).file();
        try {
            GgufCache cache = new GgufCache(RouteSetup.cacheDir());
            if (cache.current(gguf).isEmpty()) {
                log.println("packing " + gguf + " into " + cache.containerDir(gguf));
                log.flush();
            }
            return cache.containerFor(gguf, new ProgressPrinter(log));
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }
}
