package dev.laneway.engine.model;

import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.spi.RouteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EngineOptionsTest {
    private static final RouteOptions NONE = RouteOptions.defaults();

    @Test
    void aChatTemplateComesFromItsSourceItsFileOrTheNameChatml(@TempDir Path dir) throws Exception {
        assertEquals(Optional.empty(), EngineOptions.of(NONE).chatTemplate());
        assertEquals(Optional.of(ChatTemplate.CHATML),
                EngineOptions.of(NONE.withOpt("chat-template", "chatml")).chatTemplate());
        String source = "{% for m in messages %}{{ m.content }}{% endfor %}";
        assertEquals(Optional.of(source), EngineOptions.of(NONE.withOpt("chat-template", source)).chatTemplate());
        Path file = Files.writeString(dir.resolve("t.jinja"), source);
        assertEquals(Optional.of(source),
                EngineOptions.of(NONE.withOpt("chat-template-file", file.toString())).chatTemplate());
    }

    @Test
    void aTemplateNameItDoesNotKnowAnUnreadableFileOrBothAreRefusedByName(@TempDir Path dir) throws Exception {
        assertRefused(NONE.withOpt("chat-template", "vicuna-orca"), "--opt chat-template", "llama3");
        assertRefused(NONE.withOpt("chat-template", " "), "--opt chat-template", "not a Jinja template");
        assertRefused(NONE.withOpt("chat-template-file", dir.resolve("missing.jinja").toString()),
                "--opt chat-template-file", "cannot read it");
        Path empty = Files.writeString(dir.resolve("empty.jinja"), "\n");
        assertRefused(NONE.withOpt("chat-template-file", empty.toString()), "--opt chat-template-file", "empty");
        Path file = Files.writeString(dir.resolve("t.jinja"), "{{ messages }}");
        assertRefused(NONE.withOpt("chat-template", "chatml").withOpt("chat-template-file", file.toString()),
                "--opt chat-template", "not both");
    }

    @Test
    void theKvCacheIsHalfSingleOrEightBitAndNothingElse() {
        assertEquals(dev.laneway.engine.kernels.KvCache.Precision.F16, EngineOptions.of(NONE).kv());
        assertEquals(dev.laneway.engine.kernels.KvCache.Precision.Q8, EngineOptions.of(NONE.withOpt("kv", "q8")).kv());
        assertRefused(NONE.withOpt("kv", "q4_0"), "--opt kv=q4_0", "expected f16, f32 or q8");
    }

    /** stories260K's heads hold 8 elements: not a whole block of an eight-bit cache, which says so when it opens. */
    @Test
    void anEightBitCacheOfHeadsThatAreNotWholeBlocksIsRefusedByName() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> dev.laneway.engine.testing.Packed.open(dev.laneway.engine.testing.Packed.stories260k("q8"),
                        "native", NONE.withOpt("kv", "q8")).close());
        assertTrue(e.getMessage().contains("--opt kv=q8: this model's heads hold 8 elements"), e.getMessage());
    }

    private static void assertRefused(RouteOptions options, String option, String why) {
        var refusal = EngineOptions.refusal(options).orElseThrow(() -> new AssertionError("accepted: " + options));
        assertTrue(refusal.option().startsWith(option), refusal.toString());
        assertTrue(refusal.toString().contains(why), refusal.toString());
    }
}
