package dev.laneway.engine.pack;

import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Without {@code --quant}, a GGUF file keeps its bits: 4-bit files are packed at 4 bits, others at 8. */
class DefaultQuantTest {

    @Test
    void eachQuantizedMatrixKeepsItsBits() {
        Function<DType, Quant> q = Quant.defaultFor(List.of(DType.Q4_K, DType.Q6_K, DType.F16));
        assertEquals(Quant.Q4_K, q.apply(DType.Q4_K));
        assertEquals(Quant.Q4_1, q.apply(DType.Q4_0));
        assertEquals(Quant.Q4_1, q.apply(DType.Q4_1));
        assertEquals(Quant.Q8, q.apply(DType.Q6_K));
        assertEquals(Quant.Q8, q.apply(DType.Q8_0));
        assertEquals(Quant.Q8, q.apply(DType.F16));  // an unquantized matrix beside quantized ones
    }

    @Test
    void unquantizedSourcesStayUnquantized() {
        assertEquals(Quant.F32, Quant.defaultFor(List.of(DType.F32)).apply(DType.F32));
        assertEquals(Quant.BF16, Quant.defaultFor(List.of(DType.F32, DType.BF16)).apply(DType.F32));
        assertEquals(Quant.Q4_1, Quant.chosen(Optional.of("q4_1"), List.of(DType.Q8_0)).apply(DType.Q8_0));
    }

    @Test
    void aFourBitFileIsPackedAtFourBitsAndAnEightBitOneAtEight(@TempDir Path dir) throws Exception {
        // 13 norms and the embedding are BF16; 42 projections and the head are tiles
        assertEquals(Map.of("bf16", 14, "q4_1", 43), packed(dir, DType.Q4_0, "q4_1"));
        assertEquals(Map.of("bf16", 14, "q4_1", 43), packed(dir, DType.Q4_1, "q4_1"));
        assertEquals(Map.of("bf16", 14, "q8", 43), packed(dir, DType.Q8_0, "q8"));
    }

    /** {@code --quant q4_k} keeps Q4_K blocks as they are; it cannot make them from other blocks, and says so. */
    @Test
    void q4kTilesAreMadeOnlyFromQ4kBlocks(@TempDir Path dir) throws Exception {
        Path gguf = dir.resolve("q8.gguf");
        RandomModel.write(ModelShape.STORIES_15M, DType.Q8_0, 7, gguf);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GgufPacker().pack(gguf,
                dir.resolve("out"), new PackOptions(Optional.of("q4_k"), false), PackProgress.NONE));
        assertTrue(e.getMessage().endsWith("Q4_K tiles are made only from GGUF Q4_K, not Q8_0"), e.getMessage());
    }

    /** The weight formats of a random stories15M-shape file of {@code type}, packed with the defaults. */
    private static Map<String, Integer> packed(Path dir, DType type, String quant) throws Exception {
        Path gguf = dir.resolve(type + ".gguf");
        RandomModel.write(ModelShape.STORIES_15M, type, 7, gguf);
        Path container = dir.resolve(type.name());
        new GgufPacker().pack(gguf, container, PackOptions.defaults(), PackProgress.NONE);
        Container c = Container.open(container);
        assertEquals(quant, c.weights().metadata().get("quant"), type.name());
        return c.weightFormats();
    }
}
