package dev.laneway.engine.laya;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.AllocationBudget;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a Laya {@code route-policy.json}: {@link PolicyJson#parse} either gives a policy whose devices are all
 * named, or refuses the text with a {@link FormatException} naming the file. Seeds: policies as the docs write them,
 * and the crashes fuzzing found.
 */
class PolicyJsonFuzzTest {
    private static final Path FILE = Path.of("fuzz", "route-policy.json");
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @FuzzTest(maxDuration = "60s")
    void parseAnyBytes(byte[] bytes) throws Exception {
        BUDGET.check(bytes.length, () -> {
            try {
                RoutePolicy policy = PolicyJson.parse(FILE, bytes);
                policy.devices().forEach(d -> assertFalse(d.isBlank(), policy.describe()));
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(FILE + ": "), e.getMessage());
            }
        });
    }
}
