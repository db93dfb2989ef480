package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.RouteSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.laneway.runtime.cli.CommandLineTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The private dx route as a user meets it, in a build with the dx profile (this class runs only there): it serves a
 * dense model and says why, {@code --opt dx=off} hands the model to the generic route with the same output, an option
 * it cannot honour makes it step aside naming the option, and with {@code --opt dx=on} the same options are refused
 * by name with exit code 2 before any device is opened.
 */
class DxCommandsTest {
    private static final String PROMPT = "Once upon a time";

    @TempDir
    static Path tmp;
    private static Path stories;

    @BeforeAll
    static void packStories() {
        System.setProperty(RouteSetup.CACHE_DIR_PROPERTY, tmp.resolve("cache").toString());
        stories = tmp.resolve("stories-q8");
        CommandLineTest.Outcome pack = run("pack", ModelCommandsTest.stories().toString(), "-o", stories.toString(),
                "--quant", "q8");
        assertEquals(ExitCodes.OK, pack.code(), pack.err());
    }

    @AfterAll
    static void restoreCache() {
        System.clearProperty(RouteSetup.CACHE_DIR_PROPERTY);
    }

    @BeforeEach
    void resetDevices() {
        CountingDevices.reset();
    }

    @Test
    void routesShowsDxServingADenseModelAndWhy() {
        CommandLineTest.Outcome o = run("routes", "-m", stories.toString());
        assertEquals(ExitCodes.OK, o.code(), o.out());
        assertTrue(o.out().contains("1. dx        (priority 100)         serves     llama: 5 layers, hidden 64"), o.out());
        assertTrue(o.out().contains("; fused layers (halves rope, separate head)"), o.out());
        assertTrue(o.out().contains("3. generic   (generic, asked last)  not asked"), o.out());
        assertTrue(o.out().endsWith("served by: dx\n"), o.out());
    }

    @Test
    void dxOffHandsTheModelToTheGenericRouteWithTheSameOutput() {
        CommandLineTest.Outcome routes = run("routes", "-m", stories.toString(), "--opt", "dx=off");
        assertEquals(ExitCodes.OK, routes.code(), routes.out());
        assertTrue(routes.out().contains("1. dx        (priority 100)         declines   --opt dx=off"), routes.out());
        assertTrue(routes.out().endsWith("served by: generic\n"), routes.out());

        CommandLineTest.Outcome dx = run("run", "-m", stories.toString(), "-p", PROMPT, "-n", "48");
        CommandLineTest.Outcome generic = run("run", "-m", stories.toString(), "-p", PROMPT, "-n", "48", "--opt",
                "dx=off");
        assertEquals(ExitCodes.OK, dx.code(), dx.err());
        assertEquals(ExitCodes.OK, generic.code(), generic.err());
        assertTrue(dx.out().startsWith(PROMPT + ", there was a little"), dx.out());
        assertEquals(generic.out(), dx.out());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--device counting  | route 'dx' does not honour --device counting: dx runs on the host CPU only "
                    + "(--device cpu)",
            "--opt kernels=java | route 'dx' does not honour --opt kernels=java: dx runs on the native kernels"})
    void anOptionDxCannotHonourMakesItStepAsideNamingItAndTheNextRouteServes(String option, String reason) {
        List<String> args = command("routes", option);
        CommandLineTest.Outcome routes = run(args.toArray(String[]::new));
        assertEquals(ExitCodes.OK, routes.code(), routes.out());
        assertTrue(routes.out().contains("1. dx        (priority 100)         declines   " + reason), routes.out());
        assertTrue(routes.out().endsWith("served by: generic\n"), routes.out());

        List<String> runArgs = command("run", option);
        runArgs.addAll(List.of("-p", PROMPT, "-n", "8"));
        CommandLineTest.Outcome o = run(runArgs.toArray(String[]::new));
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(o.out().startsWith(PROMPT + ", there was"), o.out());
    }

    @Test
    void theCountingDeviceCountsWhatTheGenericRouteOpens() {
        CommandLineTest.Outcome o = run("run", "-m", stories.toString(), "--device", "counting", "-p", PROMPT, "-n",
                "4");
        assertEquals(ExitCodes.OK, o.code(), o.err());
        assertTrue(CountingDevices.OPENED.get() > 0 && CountingDevices.CONTEXTS.get() > 0,
                "a served model opens its device: the counts the refusals below stay at zero against");
    }

    @Test
    void laYaMakesDxStepAsideNamingIt() throws IOException {
        Path router = Files.createDirectories(tmp.resolve("router"));
        CommandLineTest.Outcome routes = run("routes", "-m", stories.toString(), "--laya", router.toString());
        assertTrue(routes.out().contains("1. dx        (priority 100)         declines   route 'dx' does not honour "
                + "--laya " + router + ": dx runs on the host only, without a router"), routes.out());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--laya ROUTER      | route 'dx' does not honour --laya ROUTER: dx runs on the host only, without a router",
            "--device counting  | route 'dx' does not honour --device counting: dx runs on the host CPU only "
                    + "(--device cpu)",
            "--opt kernels=java | route 'dx' does not honour --opt kernels=java: dx runs on the native kernels"})
    void forcedDxRefusesTheSameOptionsByNameWithExitCodeTwoBeforeAnyDeviceOpens(String option, String message)
            throws IOException {
        Path router = Files.createDirectories(tmp.resolve("router"));
        String resolved = option.replace("ROUTER", router.toString());
        for (String command : new String[] {"run", "routes"}) {
            List<String> args = command(command, resolved);
            args.addAll(List.of("--opt", "dx=on"));
            if (!resolved.startsWith("--device")) {
                args.addAll(List.of("--device", "counting"));  // a device the dispatch must not reach
            }
            if (command.equals("run")) {
                args.addAll(List.of("-p", PROMPT, "-n", "4"));
            }
            CommandLineTest.Outcome o = run(args.toArray(String[]::new));
            assertEquals(ExitCodes.USAGE, o.code(), command + ": " + o.out() + o.err());
            String text = command.equals("run") ? o.err() : o.out();
            assertTrue(text.contains(message.replace("ROUTER", router.toString())), text);
        }
        assertEquals(0, CountingDevices.OPENED.get(), "no device was opened");
        assertEquals(0, CountingDevices.CONTEXTS.get(), "no device context was opened");
    }

    @Test
    void anArchitectureDxDoesNotFuseIsServedByTheGenericRouteUnlessDxIsForced() throws IOException {
        Path phi = copy(stories, "gemma3");
        Path config = phi.resolve("config.json");
        Files.writeString(config, Files.readString(config).replace("\"llama\"", "\"gemma3\""));
        String reason = "model_type 'gemma3' is not an architecture dx fuses (llama, mistral, qwen2, qwen3, phi3)";

        CommandLineTest.Outcome routes = run("routes", "-m", phi.toString());
        assertEquals(ExitCodes.OK, routes.code(), routes.out());
        assertTrue(routes.out().contains("1. dx        (priority 100)         declines   " + reason), routes.out());
        assertTrue(routes.out().endsWith("served by: generic\n"), routes.out());

        CommandLineTest.Outcome forced = run("run", "-m", phi.toString(), "--opt", "dx=on", "--device", "counting",
                "-p", PROMPT, "-n", "4");
        assertEquals(ExitCodes.USAGE, forced.code(), forced.err());
        assertTrue(forced.err().contains("route 'dx' cannot serve " + phi + ": " + reason), forced.err());
        assertEquals(0, CountingDevices.OPENED.get() + CountingDevices.CONTEXTS.get(), "no device was opened");
    }

    @Test
    void aDxValueItCannotReadIsRefusedRatherThanPassedOver() {
        CommandLineTest.Outcome o = run("run", "-m", stories.toString(), "--opt", "dx=maybe", "-p", PROMPT, "-n",
                "4");
        assertEquals(ExitCodes.USAGE, o.code(), o.err());
        assertTrue(o.err().contains("route 'dx' cannot serve " + stories + ": --opt dx=maybe: expected on, off or "
                + "auto"), o.err());
    }

    private static List<String> command(String command, String option) {
        List<String> args = new ArrayList<>(List.of(command, "-m", stories.toString()));
        args.addAll(List.of(option.split(" ", 2)));
        return args;
    }

    private static Path copy(Path container, String name) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        try (Stream<Path> files = Files.list(container)) {
            for (Path f : files.toList()) {
                Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
        assertFalse(Files.exists(dir.resolve("npu")));
        return dir;
    }
}
