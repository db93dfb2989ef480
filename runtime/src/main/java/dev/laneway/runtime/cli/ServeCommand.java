package dev.laneway.runtime.cli;

import dev.laneway.runtime.api.ApiKeyFilter;
import dev.laneway.runtime.routes.DispatchReport;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.ModelLocator;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.runtime.serve.ServeApplication;
import dev.laneway.spi.RouteOptions;
import io.quarkus.runtime.Quarkus;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * {@code laneway serve}: checks the command line and the route choice, then starts the HTTP server, which binds its
 * port at once and loads the model behind it. Options become {@code laneway.*} configuration, so the same settings
 * work from {@code application.properties} and {@code LANEWAY_*} environment variables.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Serve a model over an OpenAI-compatible HTTP API.")
final class ServeCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080",
            description = "Port to listen on (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--api-key", paramLabel = "KEY",
            description = "Require 'Authorization: Bearer KEY' on every endpoint but the health checks.")
    String apiKey;

    @Option(names = "--api-key-file", paramLabel = "FILE",
            description = "As --api-key, with the key on the first line of FILE (it shows in no process listing).")
    Path apiKeyFile;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        RouteOptions options = model.routeOptions();
        if (port < 0 || port > 65535) {
            throw new UsageException("--port must be between 0 and 65535, was " + port);
        }
        if (apiKey != null && apiKey.isBlank()) {
            throw new UsageException("--api-key must not be blank");
        }
        if (apiKey != null && apiKeyFile != null) {
            throw new UsageException("give --api-key or --api-key-file, not both");
        }
        if (apiKeyFile != null) {
            try {
                ApiKeyFilter.readKey(apiKeyFile);
            } catch (IllegalStateException e) {
                throw new UsageException("--api-key-file: " + e.getMessage());
            }
        }
        ModelLocator.Located located = model.located();
        if (located instanceof ModelLocator.Directory dir) {
            // Refuse before anything binds or opens; a .gguf file or a checkpoint is checked once it is packed.
            DispatchReport report = new Dispatcher(RouteSetup.catalog()).dispatch(dir.dir(), options);
            if (report.refusal().isPresent()) {
                throw new UsageException(report.refusal().get());
            }
        }
        settings(options).forEach(System::setProperty);
        AtomicInteger exitCode = new AtomicInteger();
        PrintWriter err = spec.commandLine().getErr();
        Quarkus.run(ServeApplication.class, (code, failure) -> {
            exitCode.set(code);
            if (failure != null) {
                // A server that cannot start (its configuration, its port) says why in one line.
                err.println("laneway serve: cannot start: " + rootCause(failure));
                err.flush();
            }
        }, new String[0]);
        return exitCode.get();
    }

    /** The innermost cause's message, its lines joined: what Quarkus wraps in "Failed to start quarkus". */
    static String rootCause(Throwable failure) {
        Throwable c = failure;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String message = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** The command line as {@code laneway.*} and {@code quarkus.http.*} configuration properties. */
    Map<String, String> settings(RouteOptions options) {
        Map<String, String> settings = new java.util.LinkedHashMap<>();
        settings.put("laneway.model", model.model.toAbsolutePath().toString());
        options.alias().ifPresent(a -> settings.put("laneway.alias", a));
        settings.put("laneway.streams", Integer.toString(options.streams()));
        if (!options.opt().isEmpty()) {
            settings.put("laneway.opt", options.opt().entrySet().stream()
                    .map(e -> (e.getKey() + "=" + e.getValue()).replace("\\", "\\\\").replace(",", "\\,"))
                    .collect(Collectors.joining(",")));
        }
        options.laya().ifPresent(l -> settings.put("laneway.laya", l.toAbsolutePath().toString()));
        settings.put("laneway.device", options.device());
        if (apiKey != null) {
            settings.put("laneway.api-key", apiKey);
        }
        if (apiKeyFile != null) {
            settings.put("laneway.api-key-file", apiKeyFile.toAbsolutePath().toString());
        }
        settings.put("quarkus.http.host", host);
        settings.put("quarkus.http.port", Integer.toString(port));
        return settings;
    }
}
