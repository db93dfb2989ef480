package dev.laneway.runtime.routes;

import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RouteCatalogTest {
    private static final String ACME = """
            package plugin;

            import dev.laneway.spi.*;
            import java.nio.file.*;
            import java.util.*;

            public class AcmeRoute implements Route {
                public String name() { return "acme"; }
                public int priority() { return 70; }
                public Claim claim(Path dir, RouteOptions options) {
                    return Files.exists(dir.resolve("acme.json")) ? Claim.mine("an acme model")
                            : Claim.notMine("needs acme.json");
                }
                public Set<String> optKeys() { return Set.of(); }
                public Optional<OptionRefusal> refusal(RouteOptions o) { return Optional.empty(); }
                public ServedModel open(Path dir, RouteOptions o, RouteContext c) throws RouteException {
                    throw new RouteException("acme serves nothing in tests");
                }
            }
            """;

    @TempDir
    Path work;

    @Test
    void aRouteJarDroppedInThePluginDirectoryIsDiscoveredAndClaimsItsDirectories() throws Exception {
        Path plugins = Files.createDirectories(work.resolve("routes"));
        Path jar = PluginJars.build(work.resolve("build"), "AcmeRoute", ACME, plugins.resolve("acme-route.jar"));
        Path model = Files.createDirectories(work.resolve("model"));
        Files.writeString(model.resolve("acme.json"), "{}");

        RouteCatalog catalog = RouteCatalog.discover(getClass().getClassLoader(), plugins);
        assertTrue(catalog.askOrder().stream().anyMatch(r -> r.name().equals("acme")), "acme is discovered");
        assertEquals(1, catalog.askOrder().stream().filter(r -> r.name().equals("acme")).count(), "found once");
        DispatchReport report = new Dispatcher(catalog).dispatch(model, RouteOptions.defaults());
        assertEquals("acme", report.serving().orElseThrow().name());

        Files.delete(jar);
        RouteCatalog without = RouteCatalog.discover(getClass().getClassLoader(), plugins);
        assertFalse(without.askOrder().stream().anyMatch(r -> r.name().equals("acme")), "removing the jar removes it");
    }

    @Test
    void aJarThatIsNotARoutePluginIsReportedAndSkipped() throws Exception {
        Path plugins = Files.createDirectories(work.resolve("routes"));
        Files.writeString(plugins.resolve("broken.jar"), "not a jar at all");
        RouteCatalog catalog = RouteCatalog.discover(getClass().getClassLoader(), plugins);
        assertTrue(catalog.askOrder().stream().noneMatch(r -> r.name().equals("acme")));
        assertTrue(catalog.problems().stream().anyMatch(p -> p.contains("broken.jar")), catalog.problems().toString());
    }

    @Test
    void aMissingPluginDirectoryIsFine() {
        RouteCatalog catalog = RouteCatalog.discover(getClass().getClassLoader(), work.resolve("nowhere"));
        assertTrue(catalog.problems().isEmpty());
    }
}
