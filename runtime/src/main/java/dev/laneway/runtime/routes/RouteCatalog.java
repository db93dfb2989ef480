package dev.laneway.runtime.routes;

import dev.laneway.spi.Route;
import dev.laneway.spi.Spi;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The routes this process knows: those on the application class path and those in jars of the plugin directory,
 * each found through {@link ServiceLoader}. A route that fails to load is reported and skipped; when two routes share
 * a name, the first found wins and the choice is reported.
 */
public final class RouteCatalog {
    private static final System.Logger LOG = System.getLogger(RouteCatalog.class.getName());

    private final List<Route> routes;
    private final List<String> problems;

    private RouteCatalog(List<Route> routes, List<String> problems) {
        this.routes = List.copyOf(routes);
        this.problems = List.copyOf(problems);
    }

    /**
     * Finds the routes on {@code classLoader} and in the jars of {@code pluginDir} (which need not exist).
     */
    public static RouteCatalog discover(ClassLoader classLoader, Path pluginDir) {
        Map<String, Route> byName = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        load(ServiceLoader.load(Route.class, classLoader), null, "class path", byName, problems);
        for (Path jar : pluginJars(pluginDir, problems)) {
            URLClassLoader loader = jarLoader(jar, classLoader, problems);
            if (loader != null) {
                int before = byName.size();
                load(ServiceLoader.load(Route.class, loader), loader, jar.getFileName().toString(), byName, problems);
                if (byName.size() == before) {
                    problems.add("route plugin " + jar.getFileName() + " adds no route (it needs a META-INF/services/"
                            + Route.class.getName() + " entry naming its route class)");
                }
            }
        }
        problems.forEach(p -> LOG.log(System.Logger.Level.WARNING, p));
        return new RouteCatalog(new ArrayList<>(byName.values()), problems);
    }

    /** A catalog of exactly these routes (tests, embedding). */
    public static RouteCatalog of(List<Route> routes) {
        return new RouteCatalog(routes, List.of());
    }

    /** Every known route, in the order the runtime asks them. */
    public List<Route> askOrder() {
        return routes.stream().sorted(ASK_ORDER).toList();
    }

    /** What went wrong while loading routes; empty when nothing did. */
    public List<String> problems() {
        return problems;
    }

    /** Highest priority first, the generic route last, names breaking ties so the order never depends on the jar order. */
    static final Comparator<Route> ASK_ORDER = Comparator.comparing(Route::generic)
            .thenComparing(Comparator.comparingInt(Route::priority).reversed())
            .thenComparing(Route::name);

    private static void load(ServiceLoader<Route> loader, ClassLoader onlyFrom, String source,
                             Map<String, Route> byName, List<String> problems) {
        Iterator<Route> it = loader.iterator();
        while (true) {
            Route route;
            try {
                if (!it.hasNext()) {
                    return;
                }
                route = it.next();
            } catch (ServiceConfigurationError | LinkageError e) {
                problems.add("a route in " + source + " failed to load and is skipped: " + e.getMessage());
                continue;
            }
            // A plugin's loader also sees the class path's services; count each route where it lives.
            if (onlyFrom != null && route.getClass().getClassLoader() != onlyFrom) {
                continue;
            }
            register(route, source, byName, problems);
        }
    }

    private static void register(Route route, String source, Map<String, Route> byName, List<String> problems) {
        String name;
        try {
            name = route.name();
        } catch (RuntimeException e) {
            problems.add("a route in " + source + " (" + route.getClass().getName() + ") has no name and is skipped: " + e);
            return;
        }
        if (route.spiVersion() > Spi.VERSION) {
            problems.add("route '" + name + "' from " + source + " was built for SPI version " + route.spiVersion()
                    + "; this runtime speaks version " + Spi.VERSION + ", so newer features it relies on are missing");
        }
        Route first = byName.putIfAbsent(name, route);
        if (first != null) {
            problems.add("two routes are named '" + name + "': keeping " + first.getClass().getName()
                    + ", ignoring " + route.getClass().getName() + " from " + source);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "route ''{0}'' found in {1}", name, source);
        }
    }

    private static List<Path> pluginJars(Path pluginDir, List<String> problems) {
        if (pluginDir == null || !Files.isDirectory(pluginDir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(pluginDir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".jar") && Files.isRegularFile(p))
                    .sorted().toList();
        } catch (IOException e) {
            problems.add("cannot list the route plugin directory " + pluginDir + ": " + e.getMessage());
            return List.of();
        }
    }

    private static URLClassLoader jarLoader(Path jar, ClassLoader parent, List<String> problems) {
        try (JarFile ignored = new JarFile(jar.toFile())) {
            // Opened only to tell a broken file apart: a class loader silently ignores one.
        } catch (IOException e) {
            problems.add("route plugin " + jar.getFileName() + " is not a readable jar and is skipped: " + e.getMessage());
            return null;
        }
        try {
            URL url = jar.toUri().toURL();
            return new URLClassLoader("route-plugin:" + jar.getFileName(), new URL[]{url}, parent);
        } catch (MalformedURLException e) {
            problems.add("cannot load route plugin " + jar + ": " + e.getMessage());
            return null;
        }
    }
}
