package dev.laneway.engine.safetensors;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.AllocationBudget;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a safetensors file: {@link SafetensorsFile#open} either reads it, each tensor's bytes exactly what its
 * dtype and shape need and inside the file, or refuses it with a {@link FormatException} naming the file; it allocates
 * in proportion to the file either way. Seeds: small files in the layout the Q4NX writer uses, and the crashes fuzzing
 * found.
 */
class SafetensorsFuzzTest {
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @TempDir
    static Path dir;

    @FuzzTest(maxDuration = "60s")
    void openAnyBytes(byte[] bytes) throws Exception {
        Path file = dir.resolve("fuzz.safetensors");
        Files.write(file, bytes);
        BUDGET.check(bytes.length, () -> {
            try {
                SafetensorsFile st = SafetensorsFile.open(file);
                for (Tensor t : st.tensors()) {
                    ByteBuffer data = t.data();
                    assertEquals(t.elements() * t.dtype().blockBytes(), data.remaining(), t.toString());
                    if (data.hasRemaining()) {
                        data.get(0);
                        data.get(data.limit() - 1);
                    }
                }
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
            }
        });
    }
}
