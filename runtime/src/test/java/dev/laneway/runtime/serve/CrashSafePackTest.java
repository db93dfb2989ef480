package dev.laneway.runtime.serve;

import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code laneway pack}, the packaged command as a process, killed (SIGKILL) at random points while it writes a
 * container: each time the output is absent or whole, never half-written, and a later pack into the same place writes
 * it and a run reads it. (The pack cache writes its entries the same way.) Runs after the package phase.
 */
class CrashSafePackTest {
    private static final int KILLS = 8;

    @Test
    void aPackKilledAtAnyPointLeavesNoHalfWrittenContainer(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("model.gguf");
        RandomModel.write(ModelShape.named("stories15m"), DType.Q8_0, 5, source);
        Path output = dir.resolve("packed");
        long packMillis = timed(() -> assertEquals(0, run(dir, "pack", source.toString(), "-o",
                output.toString()).waitFor()));
        String expected = generate(dir, output);
        deleteTree(output);

        Random random = new Random(3);
        int absent = 0;
        int whole = 0;
        int midWrite = 0;
        for (int k = 0; k < KILLS; k++) {
            long before = partials(dir);  // those of earlier kills stay
            Process pack = run(dir, "pack", source.toString(), "-o", output.toString());
            long start = System.nanoTime();
            // the kill lands while the container is being written: once its partial directory exists
            while (partials(dir) == before && pack.isAlive()) {
                Thread.sleep(2);
            }
            long left = packMillis - (System.nanoTime() - start) / 1_000_000;
            Thread.sleep((long) (random.nextDouble() * Math.max(1, left)));
            boolean writing = pack.isAlive() && !Files.exists(output);
            pack.destroyForcibly();  // SIGKILL
            pack.waitFor(30, TimeUnit.SECONDS);
            midWrite += writing ? 1 : 0;
            if (Files.exists(output)) {
                assertEquals(expected, generate(dir, output), "a container left by kill " + k + " is whole");
                whole++;
                deleteTree(output);
            } else {
                absent++;
            }
        }
        assertEquals(0, run(dir, "pack", source.toString(), "-o", output.toString()).waitFor());
        assertEquals(expected, generate(dir, output));
        assertTrue(midWrite > 0 && absent > 0, "some kills landed while the pack wrote (" + midWrite + " mid-write, "
                + absent + " absent, " + whole + " whole)");
        System.out.printf("crash-safe pack: %d kills in a %d ms pack, %d while it wrote; %d left nothing, %d a whole"
                + " container%n", KILLS, packMillis, midWrite, absent, whole);
    }

    /** The partial directories beside the output: containers being written, or left by a killed pack. */
    private static long partials(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(".packed.partial-")).count();
        }
    }

    /** Four greedy tokens from the container, through {@code laneway run}. */
    private static String generate(Path dir, Path container) throws Exception {
        Process run = run(dir, "run", "-m", container.toString(), "-p", "Once", "-n", "4", "--temp", "0");
        String out = new String(run.getInputStream().readAllBytes());
        assertTrue(run.waitFor(120, TimeUnit.SECONDS), "run ended");
        assertEquals(0, run.exitValue(), out);
        assertFalse(out.isBlank(), "run wrote text");
        return out;
    }

    private static Process run(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Dlaneway.cache.dir=" + dir.resolve("cache"), "-jar",
                Path.of("target", "quarkus-app", "quarkus-run.jar").toAbsolutePath().toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(dir.resolve("stderr.log").toFile()).start();
    }

    private static long timed(ThrowingRunnable r) throws Exception {
        long start = System.nanoTime();
        r.run();
        return (System.nanoTime() - start) / 1_000_000;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void deleteTree(Path p) throws Exception {
        try (Stream<Path> files = Files.walk(p)) {
            for (Path f : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(f);
            }
        }
    }
}
