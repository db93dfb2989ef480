package dev.laneway.engine.safetensors;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.LeBytes;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SafetensorsFileTest {
    @TempDir
    Path dir;

    @Test
    void readsTheTinyStoriesCheckpoint() throws IOException {
        Path file = Shared.tinystoriesCheckpoint().resolve("model.safetensors");
        SafetensorsFile st = SafetensorsFile.open(file);
        assertEquals(20, st.tensors().size()); // lm_head, 9 per layer, the final norm
        assertEquals("pt", st.metadata().get("format"));
        assertEquals(2160, st.headerLength());
        Tensor head = st.tensor("lm_head.weight").orElseThrow();
        assertEquals(DType.F32, head.dtype());
        assertArrayEquals(new long[]{2048, 128}, head.shape());
        assertArrayEquals(new long[]{64, 128}, st.tensor("model.layers.1.self_attn.k_proj.weight").orElseThrow().shape());
        Tensor norm = st.tensor("model.norm.weight").orElseThrow();
        assertEquals(512, norm.data().remaining());
        assertTrue(norm.data().isReadOnly());
        try (FileChannel ch = FileChannel.open(file)) {
            ByteBuffer raw = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(raw, st.dataOffset() + 2623488 + 4 * 5);
            assertEquals(raw.getFloat(0), norm.data().getFloat(4 * 5));
        }
    }

    @Test
    void readsShardedCheckpoints() throws IOException {
        Files.write(dir.resolve("model-00001-of-00002.safetensors"),
                file("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4));
        Files.write(dir.resolve("model-00002-of-00002.safetensors"),
                file("{\"b\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]}}", 4));
        Files.writeString(dir.resolve(SafetensorsCheckpoint.INDEX_FILE), """
                {"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                                                "b": "model-00002-of-00002.safetensors"}}""");
        SafetensorsCheckpoint c = SafetensorsCheckpoint.open(dir);
        assertEquals(2, c.files().size());
        assertEquals(DType.F16, c.tensor("b").orElseThrow().dtype());
        assertEquals(20, SafetensorsCheckpoint.open(Shared.tinystoriesCheckpoint()).tensors().size());

        Files.writeString(dir.resolve(SafetensorsCheckpoint.INDEX_FILE), "{\"weight_map\": {\"a\": \"../x\"}}");
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsCheckpoint.open(dir));
        assertTrue(e.getMessage().contains("weight_map entry a"), e.getMessage());
    }

    @Test
    void readsCraftedFileWithGapsAndMetadata() throws IOException {
        Path f = write("""
                {"__metadata__": {"format": "x", "note": "hi"},
                 "b": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [64, 72]},
                 "a": {"dtype": "I8", "shape": [3], "data_offsets": [0, 3]},
                 "s": {"dtype": "F32", "shape": [], "data_offsets": [3, 7]}}""", 72);
        SafetensorsFile st = SafetensorsFile.open(f);
        assertEquals("hi", st.metadata().get("note"));
        assertEquals(3, st.tensors().size());
        assertEquals("b", st.tensors().get(0).name()); // header order
        assertEquals(8, st.tensor("b").orElseThrow().data().remaining());
        assertEquals(1, st.tensor("s").orElseThrow().elements());
    }

    @Test
    void rejectsTruncatedHeaderLength() throws IOException {
        fails(new byte[5], "at byte 0", "truncated header", "5 bytes");
    }

    @Test
    void rejectsHeaderLengthBeyondTheFile() throws IOException {
        fails(new LeBytes().u64(1000).raw("{}".getBytes()).bytes(), "at byte 0", "header length 1000 does not fit",
                "2 bytes after");
        fails(new LeBytes().u64(1L << 62).raw("{}".getBytes()).bytes(), "header length 4611686018427387904");
        fails(new LeBytes().u64(-1).raw("{}".getBytes()).bytes(), "header length 18446744073709551615");
    }

    @Test
    void rejectsHeaderOverTheLimitWithoutReadingIt() throws IOException {
        Path f = dir.resolve("big.safetensors");
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(SafetensorsFile.MAX_HEADER_BYTES + 100); // sparse
            raf.write(new LeBytes().u64(SafetensorsFile.MAX_HEADER_BYTES + 1).bytes());
        }
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        assertTrue(e.getMessage().contains("over the 104857600-byte limit"), e.getMessage());
    }

    @Test
    void rejectsHeaderThatIsNotJson() throws IOException {
        fails(file("{\"a\": {\"dtype\": nope}}", 0), "header is not valid JSON", "at byte 2");
        fails(file("[1, 2]", 0), "at byte 8", "header is a JSON array, expected a JSON object");
        fails(file("{} {}", 0), "header is not valid JSON");
        fails(file("{\"a\": 1, \"a\": 2}", 0), "header is not valid JSON", "Duplicate field 'a'");
    }

    @Test
    void rejectsUnknownDtype() throws IOException {
        fails(file("{\"w\": {\"dtype\": \"F8_E4M3\", \"shape\": [4], \"data_offsets\": [0, 4]}}", 4),
                "tensor w has unknown dtype \"F8_E4M3\"");
        fails(file("{\"w\": {\"shape\": [4], \"data_offsets\": [0, 4]}}", 4), "tensor w has no dtype");
    }

    @Test
    void rejectsDataOffsetsOutOfRange() throws IOException {
        byte[] f = file("{\"w\": {\"dtype\": \"F32\", \"shape\": [16], \"data_offsets\": [0, 64]}}", 16);
        fails(f, "tensor w data_offsets [0, 64] are out of range: the data after the header holds 16 bytes");
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [8, 4]}}", 16), "[8, 4]");
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 16),
                "tensor w data_offsets is [0], expected an array of 2 non-negative integers");
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 1e3]}}", 16),
                "expected an array of 2 non-negative integers");
    }

    @Test
    void rejectsTruncatedData() throws IOException {
        byte[] ok = file("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
                + " \"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [16, 32]}}", 32);
        Path f = dir.resolve("ok.safetensors");
        Files.write(f, ok);
        assertEquals(2, SafetensorsFile.open(f).tensors().size());
        fails(Arrays.copyOf(ok, ok.length - 1), "tensor w data_offsets [16, 32] are out of range", "31 bytes");
    }

    @Test
    void rejectsShapeThatDoesNotMatchTheBytes() throws IOException {
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 12]}}", 16),
                "tensor w of F32 [2, 2] needs 16 bytes, its data_offsets [0, 12] hold 12");
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [1099511627776, 1099511627776], \"data_offsets\": [0, 4]}}",
                16), "tensor w shape [1099511627776, 1099511627776] has more elements than a file can hold");
        fails(file("{\"w\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 16),
                "tensor w shape is [-1], expected an array of non-negative integers");
        fails(file("{\"w\": [1, 2]}", 16), "tensor w is array, expected an object");
    }

    @Test
    void rejectsOverlappingTensors() throws IOException {
        fails(file("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
                        + " \"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [8, 24]}}", 24),
                "tensors a [0, 16] and b [8, 24] overlap");
    }

    @Test
    void rejectsMetadataThatIsNotStrings() throws IOException {
        fails(file("{\"__metadata__\": {\"n\": 3}}", 0), "__metadata__.n is 3, expected a string");
        fails(file("{\"__metadata__\": [1]}", 0), "__metadata__ is not a JSON object");
    }

    private Path write(String header, int dataBytes) throws IOException {
        Path f = dir.resolve("t.safetensors");
        Files.write(f, file(header, dataBytes));
        return f;
    }

    /** A safetensors file: 8-byte length, header, {@code dataBytes} bytes of data. */
    static byte[] file(String header, int dataBytes) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        return new LeBytes().u64(h.length).raw(h).zeros(dataBytes).bytes();
    }

    private void fails(byte[] bytes, String... expected) throws IOException {
        Path f = dir.resolve("bad.safetensors");
        Files.write(f, bytes);
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        String m = e.getMessage();
        assertTrue(m.startsWith(f.toString()), m);
        for (String part : expected) {
            assertTrue(m.contains(part), "expected \"" + part + "\" in: " + m);
        }
    }
}
