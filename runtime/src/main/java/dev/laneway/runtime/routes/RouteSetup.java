package dev.laneway.runtime.routes;

import java.nio.file.Path;

/** Where this installation keeps its route plugins and caches. */
public final class RouteSetup {
    /** The directory of the launcher, set by it; the working directory otherwise. */
    public static final String HOME_PROPERTY = "laneway.home";
    /** Overrides the plugin directory. */
    public static final String ROUTES_DIR_PROPERTY = "laneway.routes.dir";
    /** Overrides the cache directory. */
    public static final String CACHE_DIR_PROPERTY = "laneway.cache.dir";

    private RouteSetup() {
    }

    public static Path home() {
        return Path.of(System.getProperty(HOME_PROPERTY, ".")).toAbsolutePath().normalize();
    }

    /** {@code laneway.routes.dir}, else {@code routes/} beside the launcher. */
    public static Path pluginDir() {
        String configured = setting(ROUTES_DIR_PROPERTY);
        return configured != null ? home().resolve(configured) : home().resolve("routes");
    }

    /** {@code laneway.cache.dir}, else {@code $XDG_CACHE_HOME/laneway}, else {@code ~/.cache/laneway}. */
    public static Path cacheDir() {
        String configured = setting(CACHE_DIR_PROPERTY);
        if (configured != null) {
            return Path.of(configured).toAbsolutePath();
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("laneway").toAbsolutePath();
    }

    /** The routes of this installation. */
    public static RouteCatalog catalog() {
        return RouteCatalog.discover(RouteSetup.class.getClassLoader(), pluginDir());
    }

    /** A system property, else its {@code LANEWAY_*} environment variable. */
    private static String setting(String property) {
        String value = System.getProperty(property);
        if (value == null) {
            value = System.getenv(property.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('-', '_'));
        }
        return value == null || value.isBlank() ? null : value;
    }
}
