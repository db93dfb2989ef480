package dev.laneway.engine.container;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.AllocationBudget;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a {@code lane.json}: {@link LaneManifest#read} either gives a manifest, which writes and reads back the
 * same, or refuses the file with a {@link FormatException} naming it. Seeds: manifests as {@link LaneManifest#write}
 * writes them, and the crashes fuzzing found.
 */
class LaneManifestFuzzTest {
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @TempDir
    static Path dir;

    @FuzzTest(maxDuration = "60s")
    void readAnyBytes(byte[] bytes) throws Exception {
        Path file = dir.resolve(LaneManifest.FILE);
        Files.write(file, bytes);
        BUDGET.check(bytes.length, () -> {
            LaneManifest manifest;
            try {
                manifest = LaneManifest.read(dir);
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
                return;
            }
            Path copy = dir.resolve("copy");
            manifest.write(copy);
            assertEquals(manifest, LaneManifest.read(copy));
        });
    }
}
