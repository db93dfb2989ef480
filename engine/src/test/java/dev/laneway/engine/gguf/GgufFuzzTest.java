package dev.laneway.engine.gguf;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.AllocationBudget;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a GGUF file: {@link GgufFile#open} either reads it, every tensor's data then inside the file, or refuses
 * it with a {@link FormatException} naming the file, and allocates in proportion to the file whichever it does. Seeds:
 * small files written with {@link GgufWriter}, the head of stories260K, and the crashes fuzzing found.
 */
class GgufFuzzTest {
    /** The header reader's 1 MiB window, and a little more. */
    private static final AllocationBudget BUDGET = new AllocationBudget(4 << 20, 64);

    @TempDir
    static Path dir;

    @FuzzTest(maxDuration = "60s")
    void openAnyBytes(byte[] bytes) throws Exception {
        Path file = dir.resolve("fuzz.gguf");
        Files.write(file, bytes);
        BUDGET.check(bytes.length, () -> {
            try {
                GgufFile gguf = GgufFile.open(file);
                for (Tensor t : gguf.tensors()) {
                    readEnds(t.data());
                }
                gguf.metadata().forEach((key, value) -> assertTrue(value != null, key));
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file + " "), e.getMessage());
            }
        });
    }

    /** Reads a tensor's first and last byte: both must be mapped from the file. */
    static void readEnds(ByteBuffer data) {
        if (data.hasRemaining()) {
            data.get(0);
            data.get(data.limit() - 1);
        }
    }
}
