package dev.laneway.engine.q4nx;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Tiles;
import dev.laneway.engine.quant.PlainConverter;
import dev.laneway.engine.quant.TileQuantizer;
import dev.laneway.engine.testing.LeBytes;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Q4nxTest {
    @TempDir
    Path dir;

    /** Packs a few stories260K tensors, tiled and plain, streaming in chunks of {@code chunk} bytes. */
    private Path writeStories(int chunk) throws IOException {
        GgufFile g = GgufFile.open(Shared.stories260kGguf());
        Tensor emb = g.tensor("token_embd.weight").orElseThrow();     // [512, 64]
        Tensor down = g.tensor("blk.0.ffn_down.weight").orElseThrow(); // [64, 172]
        Tensor gate = g.tensor("blk.0.ffn_gate.weight").orElseThrow(); // [172, 64]
        Tensor q = g.tensor("blk.0.attn_q.weight").orElseThrow();      // [64, 64]
        Tensor norm = g.tensor("output_norm.weight").orElseThrow();    // [64]
        List<Q4nxWriter.Entry> entries = List.of(
                Q4nxWriter.Entry.tiles("model.embed_tokens.weight", Layout.TILES_Q8, 512, 64),
                Q4nxWriter.Entry.tiles("model.layers.0.mlp.down_proj.weight", Layout.TILES_Q4_1, 64, 172),
                Q4nxWriter.Entry.tiles("model.layers.0.mlp.gate_proj.weight", Layout.TILES_Q4_1, 172, 64),
                Q4nxWriter.Entry.plain("model.norm.weight", DType.BF16, 64),
                Q4nxWriter.Entry.plain("model.layers.0.self_attn.q_proj.weight", DType.F32, 64, 64));
        try (Q4nxWriter w = Q4nxWriter.create(dir, Map.of("source", "stories260K"), entries)) {
            tiles(w, entries.get(0).name(), TileQuantizer.of(emb, Layout.TILES_Q8), chunk);
            tiles(w, entries.get(1).name(), TileQuantizer.of(down, Layout.TILES_Q4_1), chunk);
            tiles(w, entries.get(2).name(), TileQuantizer.of(gate, Layout.TILES_Q4_1), chunk);
            PlainConverter.of(norm, DType.BF16).forEachChunk(b -> w.write("model.norm.weight", b));
            PlainConverter.of(q, DType.F32).forEachChunk(b -> w.write(entries.get(4).name(), b));
            assertEquals(null, w.currentTensor());
            w.finish();
        }
        return dir.resolve(Q4nx.FILE_NAME);
    }

    /** Writes a quantizer's bands in pieces of at most {@code chunk} bytes. */
    private static void tiles(Q4nxWriter w, String name, TileQuantizer q, int chunk) throws IOException {
        q.forEachBand(band -> {
            while (band.hasRemaining()) {
                int n = Math.min(chunk, band.remaining());
                w.write(name, band.slice().limit(n));
                band.position(band.position() + n);
            }
        });
    }

    @Test
    void writesTheLayoutOfTheBrief() throws IOException {
        Path file = writeStories(1 << 20);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long n = b.getLong(0);
        assertEquals(0, n % 64, "header length " + n);
        String json = new String(bytes, 8, (int) n, StandardCharsets.UTF_8);
        assertEquals(json.strip().length(), json.stripTrailing().length());
        assertTrue(json.endsWith(" ") || json.endsWith("}"));
        JsonNode header = new ObjectMapper().readTree(json);
        assertEquals("q4nx", header.get("__metadata__").get("format").asText());
        assertEquals("stories260K", header.get("__metadata__").get("source").asText());
        assertEquals("64,172", header.get("__metadata__").get("shape:model.layers.0.mlp.down_proj.weight").asText());
        JsonNode down = header.get("model.layers.0.mlp.down_proj.weight");
        assertEquals("I8", down.get("dtype").asText());
        assertEquals("[2,1,5120]", down.get("shape").toString());
        int tensors = 0;
        long end = 0;
        for (Map.Entry<String, JsonNode> e : header.properties()) {
            if (!e.getKey().equals("__metadata__")) {
                long begin = e.getValue().get("data_offsets").get(0).asLong();
                assertEquals(0, begin % 64, e.getKey() + " begins at " + begin);
                assertTrue(begin >= end);
                end = e.getValue().get("data_offsets").get(1).asLong();
                tensors++;
            }
        }
        assertEquals(5, tensors);
        assertEquals(8 + n + end, bytes.length);
    }

    @Test
    void readsBackWhatItWrote() throws IOException {
        writeStories(1000);
        Q4nxFile f = Q4nxFile.open(dir);
        GgufFile g = GgufFile.open(Shared.stories260kGguf());
        assertEquals("q4nx", f.metadata().get("format"));
        assertEquals(5, f.tensors().size());

        Matrix down = f.matrix("model.layers.0.mlp.down_proj.weight");
        assertEquals(Layout.TILES_Q4_1, down.layout());
        assertEquals(64, down.rows());
        assertEquals(172, down.cols());
        assertSameRows(TileQuantizer.of(g.tensor("blk.0.ffn_down.weight").orElseThrow(), Layout.TILES_Q4_1).toMatrix(),
                down);
        Matrix emb = f.matrix("model.embed_tokens.weight");
        assertEquals(Layout.TILES_Q8, emb.layout());
        assertSameRows(TileQuantizer.of(g.tensor("token_embd.weight").orElseThrow(), Layout.TILES_Q8).toMatrix(), emb);
        assertArrayEquals(new int[]{172, 64}, f.recordedShape("model.layers.0.mlp.gate_proj.weight").orElseThrow());

        Matrix q = f.matrix("model.layers.0.self_attn.q_proj.weight");
        assertEquals(Layout.F32, q.layout());
        assertEquals(g.tensor("blk.0.attn_q.weight").orElseThrow().data().getFloat(4 * 100), q.data().getFloat(4 * 100));
        Tensor norm = f.tensor("model.norm.weight").orElseThrow();
        assertEquals(DType.BF16, norm.dtype());
        float n5 = g.tensor("output_norm.weight").orElseThrow().data().getFloat(20);
        assertEquals(Floats.floatToBf16(n5), norm.data().getShort(10));
        assertTrue(f.tiled("model.embed_tokens.weight"));
        assertFalse(f.tiled("model.norm.weight"));
    }

    private static void assertSameRows(Matrix expected, Matrix actual) {
        float[] a = new float[expected.cols()];
        float[] b = new float[expected.cols()];
        for (int r = 0; r < expected.rows(); r++) {
            Tiles.decodeRow(expected, r, a, 0);
            Tiles.decodeRow(actual, r, b, 0);
            assertArrayEquals(a, b, "row " + r);
        }
    }

    @Test
    void chunkSizeDoesNotChangeTheFile() throws IOException {
        byte[] whole = Files.readAllBytes(writeStories(1 << 20));
        byte[] pieces = Files.readAllBytes(writeStories(77));
        assertArrayEquals(whole, pieces);
    }

    @Test
    void writerRefusesOutOfOrderOverrunAndIncompleteTensors() throws IOException {
        List<Q4nxWriter.Entry> entries = List.of(Q4nxWriter.Entry.plain("a", DType.F32, 4),
                Q4nxWriter.Entry.plain("b", DType.F32, 2));
        Path file = dir.resolve("x.q4nx");
        try (Q4nxWriter w = Q4nxWriter.create(file, Map.of(), entries)) {
            assertThrows(IllegalStateException.class, () -> w.write("b", ByteBuffer.allocate(8)));
            w.write("a", ByteBuffer.allocate(8));
            assertThrows(IllegalStateException.class, () -> w.write("a", ByteBuffer.allocate(9)));
            IllegalStateException e = assertThrows(IllegalStateException.class, w::finish);
            assertTrue(e.getMessage().contains("tensor a has 8 of its 16 bytes"), e.getMessage());
        }
        assertFalse(Files.exists(file));
        assertFalse(Files.exists(dir.resolve("x.q4nx.partial")));
    }

    @Test
    void writerRefusesBadDeclarations() {
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.create(dir, Map.of(),
                List.of(Q4nxWriter.Entry.plain("a", DType.F32, 1), Q4nxWriter.Entry.plain("a", DType.F32, 1))));
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.create(dir, Map.of(),
                List.of(new Q4nxWriter.Entry("a", DType.F32, new long[]{4}, 12, 0, 0))));
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.create(dir, Map.of("format", "pt"), List.of()));
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.create(dir, Map.of("shape:a", "1,1"), List.of()));
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.Entry.tiles("w", Layout.F32, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> Q4nxWriter.create(dir, Map.of(),
                List.of(Q4nxWriter.Entry.plain("i", DType.I8, 5120))));
    }

    @Test
    void tellsAmbiguousTileKindsApartByTheRecordedShape() throws IOException {
        // 37 q4_1 tiles take as many bytes as 40 Q4_K tiles.
        int cols = 256 * 37;
        assertEquals(Layout.TILES_Q4_1.bytes(32, cols), 40L * Layout.TILES_Q4_K.tileBytes());
        Path file = dir.resolve("m.q4nx");
        try (Q4nxWriter w = Q4nxWriter.create(file, Map.of(),
                List.of(Q4nxWriter.Entry.tiles("w", Layout.TILES_Q4_1, 32, cols)))) {
            w.write("w", ByteBuffer.allocate((int) Layout.TILES_Q4_1.bytes(32, cols)));
            w.finish();
        }
        Q4nxFile f = Q4nxFile.open(file);
        assertEquals(Layout.TILES_Q4_1, f.matrix("w").layout());
        assertEquals(Layout.TILES_Q4_K, f.matrix("w", 64, 256 * 20).layout());
    }

    // ---- corrupt containers ----

    @Test
    void rejectsFilesThatAreNotQ4nx() throws IOException {
        fails(container("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4),
                "at byte 8", "not a Q4NX container: __metadata__ has no format and no I8 tensor is a tile tensor");
        fails(container("{\"w\": {\"dtype\": \"I8\", \"shape\": [1000], \"data_offsets\": [0, 1000]}}", 1000),
                "not a Q4NX container: __metadata__ has no format and no I8 tensor is a tile tensor");
        fails(container("{\"__metadata__\": {\"format\": \"pt\"}}", 0), "__metadata__ has format \"pt\"");
        fails(new LeBytes().u64(64).raw("not json".getBytes()).zeros(56).bytes(), "header is not valid JSON");
        fails(new byte[3], "truncated header");
    }

    @Test
    void rejectsTileTensorsOfNoKnownKind() throws IOException {
        fails(container(meta("") + "\"w\": {\"dtype\": \"I8\", \"shape\": [1000], \"data_offsets\": [0, 1000]}}", 1000),
                "tile tensor w holds 1000 bytes: not a whole number of tiles of q4_1 (5120 B), Q4_K (4736 B) or Q8 (8704 B)");
        fails(container(meta(", \"shape:w\": \"64,256\"")
                        + "\"w\": {\"dtype\": \"I8\", \"shape\": [5120], \"data_offsets\": [0, 5120]}}", 5120),
                "tile tensor w of 64x256 is 2 tiles of 32x256, but holds 5120 bytes");
        fails(container(meta(", \"shape:w\": \"64x256\"")
                        + "\"w\": {\"dtype\": \"I8\", \"shape\": [5120], \"data_offsets\": [0, 5120]}}", 5120),
                "__metadata__ shape:w is \"64x256\", expected \"rows,cols\"");
        fails(container("{\"__metadata__\": {\"format\": \"q4nx\", \"shape:v\": \"1,1\"}}", 0),
                "records a tile shape for v, which is not an I8 tensor");
    }

    @Test
    void rejectsUnknownDtypeAndDataPastTheEnd() throws IOException {
        fails(container(meta("") + "\"w\": {\"dtype\": \"Q4\", \"shape\": [4], \"data_offsets\": [0, 4]}}", 4),
                "tensor w has unknown dtype \"Q4\"");
        fails(container(meta("") + "\"w\": {\"dtype\": \"I8\", \"shape\": [8704], \"data_offsets\": [0, 8704]}}",
                8000), "tensor w data_offsets [0, 8704] are out of range");
    }

    @Test
    void aFileWithoutMetadataIsReadWhenItsI8TensorsAreTiles() throws IOException {
        Path f = dir.resolve("flm.q4nx");
        byte[] bytes = container("{\"w\": {\"dtype\": \"I8\", \"shape\": [1, 2, 5120], \"data_offsets\": [0, 10240]}}",
                10240);
        Files.write(f, bytes);
        FormatException zeros = assertThrows(FormatException.class, () -> Q4nxFile.open(f).matrix("w", 32, 512));
        assertTrue(zeros.getMessage().contains("zero points are all 0"), zeros.getMessage());
        bytes[bytes.length - 10240 + 513] = 1;  // one zero point of the first tile that is not 0
        Files.write(f, bytes);
        assertEquals(Layout.TILES_Q4_1, Q4nxFile.open(f).matrix("w", 32, 512).layout());
        Path q8 = dir.resolve("flm-q8.q4nx");
        Files.write(q8, container("{\"w\": {\"dtype\": \"I8\", \"shape\": [1, 8704], \"data_offsets\": [0, 8704]}}",
                8704));
        FormatException e = assertThrows(FormatException.class, () -> Q4nxFile.open(q8).matrix("w", 32, 256));
        assertTrue(e.getMessage().contains("add \"q8_order\""), e.getMessage());
    }

    /**
     * The codes tell their order when every group of 32 holds the ±127 of an absmax scale in one order only: a
     * quantised random tile in either order says which; random bytes, and zeros, say nothing, and such a file is
     * refused naming what would tell.
     */
    @Test
    void q8CodesOfAbsmaxScalesTellTheirOrder() throws IOException {
        byte[] columnMajor = new byte[8704];
        java.util.Random random = new java.util.Random(11);
        for (int r = 0; r < 32; r++) {
            for (int g = 0; g < 8; g++) {  // each row's group of 32 columns shares a scale
                float[] w = new float[32];
                float max = 0;
                for (int i = 0; i < 32; i++) {
                    w[i] = (float) random.nextGaussian();
                    max = Math.max(max, Math.abs(w[i]));
                }
                for (int i = 0; i < 32; i++) {
                    columnMajor[512 + 32 * (32 * g + i) + r] = (byte) Math.round(w[i] / max * 127);
                }
            }
        }
        byte[] rowHalves = new byte[8704];
        for (int r = 0; r < 32; r++) {
            for (int c = 0; c < 256; c++) {
                rowHalves[512 + 4096 * (r / 16) + 16 * c + r % 16] = columnMajor[512 + 32 * c + r];
            }
        }
        assertEquals(java.util.Optional.of(Q8CodeOrder.COLUMN_MAJOR), Q8CodeOrder.fromCodes(ByteBuffer.wrap(columnMajor)));
        assertEquals(java.util.Optional.of(Q8CodeOrder.ROW_HALVES), Q8CodeOrder.fromCodes(ByteBuffer.wrap(rowHalves)));
        byte[] noise = new byte[8704];
        random.nextBytes(noise);
        assertEquals(java.util.Optional.empty(), Q8CodeOrder.fromCodes(ByteBuffer.wrap(noise)));
        assertEquals(java.util.Optional.empty(), Q8CodeOrder.fromCodes(ByteBuffer.wrap(new byte[8704])));

        Path f = dir.resolve("noise.q4nx");
        byte[] file = container("{\"w\": {\"dtype\": \"I8\", \"shape\": [1, 8704], \"data_offsets\": [0, 8704]}}", 8704);
        System.arraycopy(noise, 0, file, file.length - 8704, 8704);
        Files.write(f, file);
        FormatException e = assertThrows(FormatException.class, () -> Q4nxFile.open(f).matrix("w", 32, 256));
        assertTrue(e.getMessage().contains("its codes do not tell") && e.getMessage().contains("add \"q8_order\""),
                e.getMessage());
        System.arraycopy(rowHalves, 0, file, file.length - 8704, 8704);
        Files.write(f, file);
        float[] expected = new float[256];
        float[] actual = new float[256];
        for (int r = 0; r < 32; r++) {
            new JavaKernels().row(single(columnMajor, "column-major"), r, expected, 0);
            new JavaKernels().row(Q4nxFile.open(f).matrix("w", 32, 256), r, actual, 0);
            assertArrayEquals(expected, actual, "row " + r);
        }
    }

    @Test
    void rowHalvesQ8CodesAreReadAsTheColumnMajorOnes() throws IOException {
        byte[] columnMajor = new byte[8704];
        byte[] rowHalves = new byte[8704];
        java.util.Random random = new java.util.Random(5);
        random.nextBytes(columnMajor);
        System.arraycopy(columnMajor, 0, rowHalves, 0, 512);
        for (int r = 0; r < 32; r++) {
            for (int c = 0; c < 256; c++) {
                rowHalves[512 + 4096 * (r / 16) + 16 * c + r % 16] = columnMajor[512 + 32 * c + r];
            }
        }
        float[] expected = new float[256];
        float[] actual = new float[256];
        for (int r = 0; r < 32; r++) {
            new JavaKernels().row(single(columnMajor, "column-major"), r, expected, 0);
            new JavaKernels().row(single(rowHalves, "row-halves"), r, actual, 0);
            assertArrayEquals(expected, actual, "row " + r);
        }
    }

    private Matrix single(byte[] tile, String order) throws IOException {
        Path f = dir.resolve(order + ".q4nx");
        byte[] file = container("{\"__metadata__\": {\"q8_order\": \"" + order + "\"}, \"w\": {\"dtype\": \"I8\","
                + " \"shape\": [1, 8704], \"data_offsets\": [0, 8704]}}", 8704);
        System.arraycopy(tile, 0, file, file.length - 8704, 8704);
        Files.write(f, file);
        return Q4nxFile.open(f).matrix("w", 32, 256);
    }

    @Test
    void matrixNeedsAShapeForUnrecordedTiles() throws IOException {
        Path f = dir.resolve("t.q4nx");
        Files.write(f, container(meta(", \"q8_order\": \"column-major\"") + "\"w\": {\"dtype\": \"I8\","
                + " \"shape\": [2, 8704], \"data_offsets\": [0, 17408]}}", 17408));
        Q4nxFile q = Q4nxFile.open(f);
        FormatException e = assertThrows(FormatException.class, () -> q.matrix("w"));
        assertTrue(e.getMessage().contains("has no recorded shape"), e.getMessage());
        Matrix m = q.matrix("w", 40, 200);
        assertEquals(Layout.TILES_Q8, m.layout());
        e = assertThrows(FormatException.class, () -> q.matrix("w", 100, 200));
        assertTrue(e.getMessage().contains("not 4 tiles of one kind"), e.getMessage());
        e = assertThrows(FormatException.class, () -> q.matrix("nope"));
        assertTrue(e.getMessage().contains("no tensor nope"), e.getMessage());
    }

    /** An empty plain tensor is no weight matrix: refused as a FormatException, not by Matrix's constructor. */
    @Test
    void matrixRefusesAnEmptyTensor() throws IOException {
        Path f = dir.resolve("e.q4nx");
        Files.write(f, container(meta("") + "\"w\": {\"dtype\": \"F32\", \"shape\": [0, 4], \"data_offsets\": [0, 0]}}",
                0));
        Q4nxFile q = Q4nxFile.open(f);
        FormatException e = assertThrows(FormatException.class, () -> q.matrix("w"));
        assertEquals(f + " at byte 8: tensor w [0, 4] as a 0x4 matrix: a weight matrix has at least one row and one"
                + " column", e.getMessage());
    }

    private static String meta(String extra) {
        return "{\"__metadata__\": {\"format\": \"q4nx\"" + extra + "}, ";
    }

    private static byte[] container(String header, int dataBytes) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        return new LeBytes().u64(h.length).raw(h).zeros(dataBytes).bytes();
    }

    private void fails(byte[] bytes, String... expected) throws IOException {
        Path f = dir.resolve("bad.q4nx");
        Files.write(f, bytes);
        FormatException e = assertThrows(FormatException.class, () -> Q4nxFile.open(f));
        String m = e.getMessage();
        assertTrue(m.startsWith(f.toString()), m);
        for (String part : expected) {
            assertTrue(m.contains(part), "expected \"" + part + "\" in: " + m + " " + Arrays.toString(expected));
        }
    }
}
