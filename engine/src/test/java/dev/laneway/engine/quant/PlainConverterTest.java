package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Floats;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlainConverterTest {

    @Test
    void convertsF32ToBf16AndF16RoundingToNearest() {
        float[] w = TileQuantizerTest.gaussian(3, 5, 1);
        Tensor t = TileQuantizerTest.f32("w", 3, 5, w);
        ByteBuffer bf16 = PlainConverter.of(t, DType.BF16).toBuffer();
        ByteBuffer f16 = PlainConverter.of(t, DType.F16).toBuffer();
        assertEquals(30, bf16.remaining());
        for (int i = 0; i < w.length; i++) {
            assertEquals(Floats.floatToBf16(w[i]), bf16.getShort(2 * i));
            assertEquals(Floats.floatToF16(w[i]), f16.getShort(2 * i));
        }
    }

    @Test
    void dequantizesBlocksToF32() {
        Tensor t = TileQuantizerTest.randomBlocks(DType.Q6_K, 3, 512, new Random(4), false);
        PlainConverter p = PlainConverter.of(t, DType.F32);
        assertEquals(3 * 512 * 4, p.bytes());
        ByteBuffer out = p.toBuffer();
        float[] expected = Dequant.toFloat(t);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], out.getFloat(4 * i));
        }
    }

    @Test
    void passesTheSameTypeThroughInChunks() throws IOException {
        int rows = 1 << 12;
        int cols = 300; // 1.2 MB of floats: two chunks
        float[] w = TileQuantizerTest.gaussian(rows, cols, 2);
        Tensor t = TileQuantizerTest.f32("emb", rows, cols, w);
        List<Integer> sizes = new ArrayList<>();
        ByteBuffer all = ByteBuffer.allocate(rows * cols * 4).order(ByteOrder.LITTLE_ENDIAN);
        PlainConverter.of(t, DType.F32).forEachChunk(c -> {
            sizes.add(c.remaining());
            all.put(c);
        });
        assertTrue(sizes.size() >= 2, sizes.toString());
        all.flip();
        for (int i = 0; i < w.length; i++) {
            assertEquals(w[i], all.getFloat(4 * i));
        }
    }

    @Test
    void chunksHoldWholeRows() throws IOException {
        int rows = 3000;
        int cols = 200;
        Tensor t = TileQuantizerTest.f32("w", rows, cols, TileQuantizerTest.gaussian(rows, cols, 3));
        List<Integer> sizes = new ArrayList<>();
        PlainConverter.of(t, DType.BF16).forEachChunk(c -> sizes.add(c.remaining()));
        assertTrue(sizes.size() >= 2, sizes.toString());
        assertEquals(rows * cols * 2, sizes.stream().mapToInt(Integer::intValue).sum());
        sizes.forEach(s -> assertEquals(0, s % (cols * 2)));
    }

    @Test
    void refusesQuantizedTargets() {
        Tensor t = TileQuantizerTest.f32("w", 1, 32, new float[32]);
        assertThrows(IllegalArgumentException.class, () -> PlainConverter.of(t, DType.Q8_0));
    }
}
