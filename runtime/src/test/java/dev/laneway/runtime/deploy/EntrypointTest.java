package dev.laneway.runtime.deploy;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The image's entry point turns LANEWAY_* variables into {@code serve} options: run with a stand-in {@code java}
 * that prints the command line it was given.
 */
class EntrypointTest {
    private static final Path ENTRYPOINT = Path.of("..", "src", "main", "docker", "laneway-entrypoint");
    private static final List<String> JVM = List.of("-Dlaneway.home=/opt/laneway",
            "-Dorg.bytedeco.javacpp.cachedir=/var/cache/laneway/javacpp", "-jar", "/opt/laneway/quarkus-run.jar");

    @TempDir
    Path bin;

    @BeforeEach
    void standInJava() throws IOException {
        Path java = bin.resolve("java");
        Files.writeString(java, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void servesByDefaultWithTheOptionsOfTheEnvironment() throws Exception {
        Map<String, String> env = Map.of("LANEWAY_MODEL", "/models/m.gguf", "LANEWAY_ALIAS", "tiny",
                "LANEWAY_STREAMS", "4", "LANEWAY_LAYA", "/models/laya", "LANEWAY_DEVICE", "cpu",
                "LANEWAY_HOST", "0.0.0.0", "LANEWAY_PORT", "8080", "LANEWAY_OPT", "kv=q8,note=a b");
        assertEquals(jvmThen("serve", "--model", "/models/m.gguf", "--alias", "tiny", "--streams", "4",
                "--laya", "/models/laya", "--device", "cpu", "--host", "0.0.0.0", "--port", "8080",
                "--opt", "kv=q8", "--opt", "note=a b"), run(env));
    }

    @Test
    void aDirectoryAndAPresetOfModelsComeFromTheEnvironmentToo() throws Exception {
        Map<String, String> env = Map.of("LANEWAY_MODELS_DIR", "/models", "LANEWAY_MODELS_PRESET",
                "/config/models.ini");
        assertEquals(jvmThen("serve", "--models-dir", "/models", "--models-preset", "/config/models.ini"), run(env));
    }

    @Test
    void theCommandLineWinsOverTheEnvironment() throws Exception {
        Map<String, String> env = Map.of("LANEWAY_MODEL", "/models/a", "LANEWAY_PORT", "8080",
                "LANEWAY_HOST", "0.0.0.0", "LANEWAY_OPT", "x=1");
        assertEquals(jvmThen("serve", "-m", "/models/b", "--port=9090", "--opt", "y=2", "--host", "0.0.0.0"),
                run(env, "serve", "-m", "/models/b", "--port=9090", "--opt", "y=2"));
    }

    @Test
    void otherCommandsTakeNothingFromTheEnvironment() throws Exception {
        assertEquals(jvmThen("inspect", "/models/a"),
                run(Map.of("LANEWAY_MODEL", "/models/b"), "inspect", "/models/a"));
    }

    @Test
    void theApiKeyStaysOffTheCommandLineAndJvmOptionsComeFirst() throws Exception {
        List<String> args = run(Map.of("LANEWAY_API_KEY", "secret",
                "LANEWAY_JAVA_OPTS", "-XX:MaxRAMPercentage=50 -Xss1m"));
        assertFalse(args.stream().anyMatch(a -> a.contains("secret")), args::toString);
        List<String> expected = new ArrayList<>(List.of("-XX:MaxRAMPercentage=50", "-Xss1m"));
        expected.addAll(jvmThen("serve"));
        assertEquals(expected, args);
    }

    private static List<String> jvmThen(String... args) {
        List<String> all = new ArrayList<>(JVM);
        all.addAll(List.of(args));
        return all;
    }

    /** The entry point's java command line, one argument a line, with only the given LANEWAY_* variables set. */
    private List<String> run(Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", ENTRYPOINT.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(k -> k.startsWith("LANEWAY_") || k.startsWith("DJL_"));
        environment.putAll(new HashMap<>(env));
        environment.put("PATH", bin + ":" + environment.get("PATH"));
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), out);
        return out.lines().toList();
    }
}
