package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DequantTest {

    @Test
    void decodesHandBuiltQ4_0() {
        byte[] b = new byte[18];
        putF16(b, 0, 0.5f);
        for (int j = 0; j < 16; j++) {
            b[2 + j] = (byte) (j | (15 - j) << 4);
        }
        float[] y = decode(DType.Q4_0, b);
        for (int j = 0; j < 16; j++) {
            assertEquals((j - 8) * 0.5f, y[j]);
            assertEquals((15 - j - 8) * 0.5f, y[j + 16]);
        }
    }

    @Test
    void decodesHandBuiltQ4_1() {
        byte[] b = new byte[20];
        putF16(b, 0, 0.25f);
        putF16(b, 2, -1f);
        for (int j = 0; j < 16; j++) {
            b[4 + j] = (byte) (j | (15 - j) << 4);
        }
        float[] y = decode(DType.Q4_1, b);
        for (int j = 0; j < 16; j++) {
            assertEquals(j * 0.25f - 1, y[j]);
            assertEquals((15 - j) * 0.25f - 1, y[j + 16]);
        }
    }

    @Test
    void decodesHandBuiltQ8_0() {
        byte[] b = new byte[34];
        putF16(b, 0, 2f);
        for (int j = 0; j < 32; j++) {
            b[2 + j] = (byte) (j - 16);
        }
        float[] y = decode(DType.Q8_0, b);
        for (int j = 0; j < 32; j++) {
            assertEquals(2f * (j - 16), y[j]);
        }
    }

    @Test
    void decodesHandBuiltQ5_0() {
        byte[] b = new byte[22];
        putF16(b, 0, 1f);
        b[2] = (byte) 0xff;
        b[3] = (byte) 0xff; // qh bits 0..15 set: elements 0..15 get bit 4, elements 16..31 do not
        for (int j = 0; j < 16; j++) {
            b[6 + j] = 0x31;
        }
        float[] y = decode(DType.Q5_0, b);
        for (int j = 0; j < 16; j++) {
            assertEquals(1f, y[j]); // (1 | 16) − 16
            assertEquals(-13f, y[j + 16]); // 3 − 16
        }
    }

    @Test
    void decodesHandBuiltQ4_K() {
        byte[] b = new byte[144];
        putF16(b, 0, 1f);
        putF16(b, 2, 0.5f);
        byte[] scales = {1 | 0x40, 2, 3, 4, 5 | (byte) 0x80, 6, 7, 8, 0x21, 0x43, 0x65, (byte) 0x87};
        System.arraycopy(scales, 0, b, 4, 12);
        for (int i = 0; i < 128; i++) {
            b[16 + i] = 0x21; // low nibble 1 (even sub-blocks), high nibble 2 (odd sub-blocks)
        }
        // Six-bit scales: low 6 bits of bytes 0..3 / 4..7 for sub-blocks 0..3; for 4..7, 4 bits from bytes 8..11 and
        // the top 2 bits of bytes 0..3 (scale) and 4..7 (min).
        int[] sc = {1, 2, 3, 4, 1 + 16, 3, 5, 7};
        int[] m = {5, 6, 7, 8, 2 + 32, 4, 6, 8};
        float[] y = decode(DType.Q4_K, b);
        for (int s = 0; s < 8; s++) {
            int code = s % 2 == 0 ? 1 : 2;
            for (int l = 0; l < 32; l++) {
                assertEquals(sc[s] * code - 0.5f * m[s], y[s * 32 + l], "sub-block " + s);
            }
        }
    }

    @Test
    void decodesHandBuiltQ6_K() {
        byte[] b = new byte[210];
        putF16(b, 208, 0.5f);
        for (int i = 0; i < 16; i++) {
            b[192 + i] = (byte) (i % 2 == 0 ? i + 1 : -i);
        }
        b[0] = 0x5a;                 // ql[0]: low 10, high 5
        b[128] = (byte) 0b11100100;  // qh[0]: 2-bit fields 0, 1, 2, 3
        float[] y = decode(DType.Q6_K, b);
        assertEquals(0.5f * b[192] * (10 - 32), y[0]);
        assertEquals(0.5f * b[194] * (16 - 32), y[32]);
        assertEquals(0.5f * b[196] * (5 + 32 - 32), y[64]);
        assertEquals(0.5f * b[198] * (48 - 32), y[96]);
        assertEquals(0.5f * b[192] * -32, y[1]);
        assertEquals(0.5f * b[193] * -32, y[16]);
        assertEquals(0.5f * b[200] * -32, y[128]);
    }

    /** Random blocks of every type, against expected values written by an independent implementation. */
    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
            "Q6_K", "Q8_K"})
    void matchesReferenceValues(DType type) throws IOException {
        byte[] blocks = resource(type.name().toLowerCase() + ".blocks");
        ByteBuffer expected = ByteBuffer.wrap(resource(type.name().toLowerCase() + ".f32")).order(ByteOrder.LITTLE_ENDIAN);
        int n = blocks.length / type.blockBytes() * type.blockSize();
        assertEquals(n * 4, expected.remaining());
        float[] y = new float[n];
        Dequant.blocksToFloat(type, blocks, 0, n, y, 0);
        for (int i = 0; i < n; i++) {
            float e = expected.getFloat(4 * i);
            assertEquals(e, y[i], Math.abs(e) * 1e-6f, type + " element " + i);
        }
    }

    @Test
    void readsRowsOfQuantizedTensor() throws IOException {
        byte[] blocks = resource("q4_k.blocks"); // 4 blocks: a 2 x 512 tensor
        float[] all = new float[1024];
        Dequant.blocksToFloat(DType.Q4_K, blocks, 0, 1024, all, 0);
        Tensor t = new Tensor("w", DType.Q4_K, new long[]{2, 512}, ByteBuffer.wrap(blocks));
        float[] row = new float[512 + 3];
        Dequant.rowToFloat(t, 1, row, 3);
        for (int c = 0; c < 512; c++) {
            assertEquals(all[512 + c], row[3 + c]);
        }
        assertArrayEquals(all, Dequant.toFloat(t));
        assertThrows(IndexOutOfBoundsException.class, () -> Dequant.rowToFloat(t, 2, row, 0));
    }

    @Test
    void readsHalfPrecisionTensors() {
        float[] values = {1f, -2.5f, 0.099975586f, 65504f, 1e-7f, 0f};
        ByteBuffer f16 = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer bf16 = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            f16.putShort(Floats.floatToF16(v));
            bf16.putShort(Floats.floatToBf16(v));
        }
        float[] a = Dequant.toFloat(new Tensor("h", DType.F16, new long[]{2, 3}, f16.flip()));
        float[] b = Dequant.toFloat(new Tensor("b", DType.BF16, new long[]{6}, bf16.flip()));
        for (int i = 0; i < values.length; i++) {
            assertEquals(values[i], a[i], Math.max(Math.abs(values[i]) * 1e-3f, 6e-8f), "f16 " + i);
            assertEquals(values[i], b[i], Math.abs(values[i]) * 4e-3f, "bf16 " + i);
        }
    }

    @Test
    void readsF32RowsOfStories260k() throws IOException {
        GgufFile g = GgufFile.open(Shared.stories260kGguf());
        Tensor emb = g.tensor("token_embd.weight").orElseThrow();
        RowDecoder rows = new RowDecoder(emb);
        assertEquals(512, rows.rows());
        assertEquals(64, rows.cols());
        float[] row = new float[64];
        rows.read(403, row, 0);
        ByteBuffer raw = emb.data();
        for (int c = 0; c < 64; c++) {
            assertEquals(raw.getFloat((403 * 64 + c) * 4), row[c]);
        }
        float[] norm = Dequant.toFloat(g.tensor("output_norm.weight").orElseThrow());
        assertEquals(64, norm.length);
        assertTrue(norm[0] != 0);
    }

    @Test
    void refusesTypesItCannotRead() {
        Tensor t = new Tensor("ids", DType.I32, new long[]{4}, ByteBuffer.allocate(16));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RowDecoder(t));
        assertTrue(e.getMessage().contains("ids"), e.getMessage());
    }

    private static float[] decode(DType type, byte[] block) {
        float[] y = new float[type.blockSize()];
        Dequant.blocksToFloat(type, block, 0, y.length, y, 0);
        return y;
    }

    static void putF16(byte[] b, int at, float v) {
        short h = Floats.floatToF16(v);
        b[at] = (byte) h;
        b[at + 1] = (byte) (h >>> 8);
    }

    static byte[] resource(String name) throws IOException {
        try (InputStream in = DequantTest.class.getResourceAsStream("/quant/" + name)) {
            if (in == null) {
                throw new IOException("missing test resource /quant/" + name);
            }
            return in.readAllBytes();
        }
    }
}
