package dev.laneway.engine.config;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.AllocationBudget;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a {@code config.json}: {@link ConfigJson#parse} either gives a {@link ModelConfig}, whose
 * {@link ConfigJson#toJson} text (what a container's config.json holds) reads back and writes the same text again,
 * or refuses the text with a {@link FormatException} naming the file; allocation stays in proportion to the text (a head_dim of 2^30 must not size a table). Seeds: the
 * configs of the architectures Laneway serves, as Hugging Face writes them, and the crashes fuzzing found.
 */
class ConfigJsonFuzzTest {
    private static final Path FILE = Path.of("fuzz", ConfigJson.FILE_NAME);
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @FuzzTest(maxDuration = "60s")
    void parseAnyBytes(byte[] bytes) throws Exception {
        BUDGET.check(bytes.length, () -> {
            ModelConfig config;
            try {
                config = ConfigJson.parse(FILE, bytes);
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(FILE + ": "), e.getMessage());
                return;
            }
            // Defaults come back explicit (Gemma's query_pre_attn_scalar as head_dim), so the text, not the config, is
            // what must be stable.
            String written = ConfigJson.toJson(config);
            assertEquals(written, ConfigJson.toJson(ConfigJson.parse(FILE, written.getBytes(StandardCharsets.UTF_8))));
        });
    }
}
