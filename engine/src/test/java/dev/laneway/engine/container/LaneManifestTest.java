package dev.laneway.engine.container;

import dev.laneway.engine.format.FormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A lane manifest reads back as written; a broken one is refused naming the file and the field. */
class LaneManifestTest {
    private static final Map<String, Integer> SHAPE = Map.of("hidden_size", 64, "num_hidden_layers", 2,
            "num_attention_heads", 4, "num_key_value_heads", 2, "head_dim", 16, "intermediate_size", 128,
            "vocab_size", 300);

    @TempDir
    Path dir;

    @Test
    void readsBackWhatItWrites() throws IOException {
        LaneManifest m = new LaneManifest("set-v1", "npu", SHAPE, List.of("layer.xclbin", "kernels/head.xclbin"));
        m.write(dir);
        assertEquals(m, LaneManifest.read(dir));
    }

    @Test
    void refusesTextThatIsNotUtf8AsInvalidJson() throws IOException {
        Files.write(dir.resolve(LaneManifest.FILE), new byte[] {'{', '"', (byte) 0xFF, '"', ':', '1', '}'});
        FormatException e = assertThrows(FormatException.class, () -> LaneManifest.read(dir));
        assertTrue(e.getMessage().startsWith(dir.resolve(LaneManifest.FILE) + ": not valid JSON: Invalid UTF-8"),
                e.getMessage());
    }

    /** Kernel files are names in the manifest's directory: not another JSON type, nor a path out of it. */
    @Test
    void refusesKernelFilesOutsideItsDirectory() throws IOException {
        for (String kernels : List.of("[{}]", "[\"\"]", "[\"/etc/passwd\"]", "[\"a.xclbin\", \"../b.xclbin\"]")) {
            new LaneManifest("set-v1", "npu", SHAPE, List.of()).write(dir);
            Path file = dir.resolve(LaneManifest.FILE);
            Files.writeString(file, Files.readString(file).replace("\"kernels\" : [ ]", "\"kernels\": " + kernels));
            FormatException e = assertThrows(FormatException.class, () -> LaneManifest.read(dir), kernels);
            assertTrue(e.getMessage().contains("]: expected the name of a file in the manifest's directory, was "),
                    e.getMessage());
        }
    }
}
