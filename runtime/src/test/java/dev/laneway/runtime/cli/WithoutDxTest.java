package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.DispatchReport;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.RouteCatalog;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static dev.laneway.runtime.cli.CommandLineTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dispatch of a build without the dx route (the runtime has no compile-time dependency on it): the routes of this
 * build less dx serve a dense model through the generic route, and {@code ./laneway routes} does not mention dx. The
 * build itself is checked by {@code .ci/without-dx}, which builds with {@code -P '!dx'} and runs the launcher.
 */
class WithoutDxTest {
    @TempDir
    static Path tmp;

    @Test
    void aDenseModelIsServedByTheGenericRouteAndDxIsNotMentioned() {
        Path stories = tmp.resolve("stories-f32");
        assertEquals(ExitCodes.OK, run("pack", ModelCommandsTest.stories().toString(), "-o", stories.toString(),
                "--quant", "f32").code());
        RouteCatalog withoutDx = RouteCatalog.of(RouteSetup.catalog().askOrder().stream()
                .filter(r -> !r.name().equals("dx")).toList());
        DispatchReport report = new Dispatcher(withoutDx).dispatch(stories, RouteOptions.defaults());
        assertEquals("generic", report.serving().orElseThrow().name());
        StringWriter out = new StringWriter();
        RoutesCommand.print(report, new PrintWriter(out));
        assertFalse(out.toString().contains("dx"), out.toString());
        assertTrue(out.toString().endsWith("served by: generic\n"), out.toString());
    }
}
