package dev.laneway.engine.plan;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.AllocationBudget;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a {@code plan.json}: {@link PlanJson#read} either gives a plan, which writes and reads back the same,
 * or refuses the file with a {@link FormatException} naming it; {@link PlanJson#readIfLaneways} agrees. Seeds: the
 * standard plans as {@link PlanJson#write} writes them, and the crashes fuzzing found.
 */
class PlanJsonFuzzTest {
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @TempDir
    static Path dir;

    @FuzzTest(maxDuration = "60s")
    void readAnyBytes(byte[] bytes) throws Exception {
        Path file = dir.resolve("plan.json");
        Files.write(file, bytes);
        BUDGET.check(bytes.length, () -> {
            Plan plan;
            try {
                plan = PlanJson.read(file);
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
                try {
                    Optional<Plan> other = PlanJson.readIfLaneways(file);
                    assertTrue(other.isEmpty(), "readIfLaneways read a plan that read refused: " + e.getMessage());
                } catch (FormatException again) {
                    assertTrue(again.getMessage().startsWith(file + ": "), again.getMessage());
                }
                return;
            }
            assertEquals(Optional.of(plan), PlanJson.readIfLaneways(file));
            Path copy = dir.resolve("copy.json");
            PlanJson.write(plan, copy);
            assertEquals(plan, PlanJson.read(copy));
        });
    }
}
