package dev.laneway.engine.gguf;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.config.GgufConfig;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.AllocationBudget;
import dev.laneway.engine.tokenizer.GgufTokenizerConverter;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a GGUF model file: {@link GgufFile#open}, then what opening a model reads of it next, its
 * {@link GgufConfig} and its vocabulary as tokenizer files ({@link GgufTokenizerConverter}), either read it, every
 * tensor's data then inside the file, or refuse it with a {@link FormatException} naming the file, and allocate in
 * proportion to the file whichever they do. Seeds: small files written with {@link GgufWriter} (no bytes of a
 * real model), and the crashes fuzzing found.
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
                refusedByName(file, () -> GgufConfig.from(gguf));
                refusedByName(file, () -> GgufTokenizerConverter.convert(gguf));
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
            }
        });
    }

    private interface Read {
        Object run() throws FormatException;
    }

    /** Runs {@code read}, which may refuse the file, but only with a FormatException naming it. */
    private static void refusedByName(Path file, Read read) {
        try {
            read.run();
        } catch (FormatException e) {
            assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
        }
    }

    /** Reads a tensor's first and last byte: both must be mapped from the file. */
    static void readEnds(ByteBuffer data) {
        if (data.hasRemaining()) {
            data.get(0);
            data.get(data.limit() - 1);
        }
    }
}
