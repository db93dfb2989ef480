package dev.laneway.engine.bench;

import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Laneway measured against llama.cpp's own file of base log-probabilities, made by llama-perplexity for stories260K
 * (all F32) over a short story, 2 chunks of 128 tokens:
 * <pre>
 * llama-perplexity -m stories260K.gguf -f engine/src/test/resources/quant/story.txt -c 128 --chunks 2 -t 1 \
 *     --kl-divergence-base engine/src/test/resources/quant/stories260K-c128.kld
 * </pre>
 * The same weights served exactly are next to no distance from it; requantized at 8 bits, measurably further.
 */
class KlDivergenceTest {
    @TempDir
    static Path dir;
    private static Path base;

    @BeforeAll
    static void locate() throws URISyntaxException {
        base = Path.of(KlDivergenceTest.class.getResource("/quant/stories260K-c128.kld").toURI());
    }

    @Test
    void theSameWeightsAreNextToNoDistanceAndRequantizedOnesFurther() throws IOException {
        KlDivergence.Result exact = measure("f32");
        KlDivergence.Result q8 = measure("q8");
        assertEquals(2 * 63, exact.count(), "the second half of each chunk, but its last token");
        assertTrue(exact.meanKld() < 1e-4, "exact weights: " + exact.meanKld());
        assertTrue(exact.sameTop() > 0.97, "exact weights agree on the top token: " + exact.sameTop());
        assertTrue(Math.abs(exact.logPplRatio()) < 1e-3, "the same perplexity: " + exact.logPplRatio());
        assertTrue(q8.meanKld() > 3 * exact.meanKld() && q8.meanKld() < 0.01,
                "8-bit weights: " + q8.meanKld() + ", exact " + exact.meanKld());
    }

    @Test
    void otherFilesAreRefusedByWhatIsWrong() throws IOException {
        Path notLogits = dir.resolve("not.kld");
        Files.write(notLogits, new byte[64]);
        Path cut = dir.resolve("cut.kld");
        byte[] all = Files.readAllBytes(base);
        Files.write(cut, Arrays.copyOf(all, all.length - 100));
        try (LanewayModel m = Packed.open(packed("f32"), "native")) {
            IOException e = assertThrows(IOException.class, () -> KlDivergence.measure(m, notLogits, 1));
            assertTrue(e.getMessage().endsWith("is not a file of base log-probabilities (no _logits_ header)"),
                    e.getMessage());
            assertEquals(63, KlDivergence.measure(m, cut, 1).count(), "the first chunk is whole");
            IOException early = assertThrows(IOException.class, () -> KlDivergence.measure(m, cut, 2));
            assertTrue(early.getMessage().endsWith("ends early"), early.getMessage());
        }
    }

    private static KlDivergence.Result measure(String quant) throws IOException {
        try (LanewayModel m = Packed.open(packed(quant), "native")) {
            return KlDivergence.measure(m, base, Integer.MAX_VALUE);
        }
    }

    private static Path packed(String quant) throws IOException {
        Path out = dir.resolve(quant);
        if (!Files.exists(out)) {
            new GgufPacker().pack(Shared.stories260kGguf(), out, new PackOptions(Optional.of(quant), false),
                    PackProgress.NONE);
        }
        return out;
    }
}
