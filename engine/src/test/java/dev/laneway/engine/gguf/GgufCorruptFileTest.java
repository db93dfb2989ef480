package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.GgufBuilder;
import dev.laneway.engine.testing.LeBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.laneway.engine.testing.GgufBuilder.*;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every corrupt GGUF gives a FormatException naming the file, the offset and what was expected. */
class GgufCorruptFileTest {
    private static final long HUGE = 1L << 62;

    @TempDir
    Path dir;

    /** A header with {@code tensors} tensors and {@code kvs} metadata entries to follow. */
    private static LeBytes header(long tensors, long kvs) {
        return new LeBytes().u32(0x46554747).u32(3).u64(tensors).u64(kvs);
    }

    private void fails(byte[] bytes, String... expected) throws IOException {
        Path file = dir.resolve("bad.gguf");
        Files.write(file, bytes);
        FormatException e = assertThrows(FormatException.class, () -> GgufFile.open(file));
        String m = e.getMessage();
        assertTrue(m.startsWith(file.toString()), m);
        for (String part : expected) {
            assertTrue(m.contains(part), "expected \"" + part + "\" in: " + m);
        }
    }

    @Test
    void rejectsWrongMagic() throws IOException {
        fails(new LeBytes().raw("GGML".getBytes()).zeros(20).bytes(), "at byte 0", "wrong magic", "\"GGUF\"");
    }

    @Test
    void rejectsUnsupportedVersions() throws IOException {
        fails(new LeBytes().u32(0x46554747).u32(1).zeros(16).bytes(), "at byte 4", "unsupported GGUF version 1",
                "expected 2 or 3");
        fails(new LeBytes().u32(0x46554747).u32(4).zeros(16).bytes(), "unsupported GGUF version 4");
        fails(new LeBytes().u32(0x46554747).u32(0x03000000).zeros(16).bytes(), "big-endian");
    }

    @Test
    void rejectsTruncatedHeader() throws IOException {
        fails(new LeBytes().u32(0x46554747).u32(3).u16(0).bytes(), "at byte 0", "truncated header", "10");
    }

    @Test
    void rejectsHugeCountsWithoutAllocating() throws IOException {
        fails(header(0, HUGE).bytes(), "at byte 24", "claims " + HUGE + " metadata entries");
        fails(header(HUGE, 0).bytes(), "at byte 24", "claims " + HUGE + " tensor entries");
        fails(header(0, -1).bytes(), "claims 18446744073709551615 metadata entries");
    }

    @Test
    void rejectsHugeStringLength() throws IOException {
        fails(header(0, 1).u64(HUGE).zeros(16).bytes(), "at byte 24", "metadata key #0", "claims " + HUGE + " bytes");
        fails(header(0, 1).str("k").u32(STRING).u64(HUGE).bytes(), "at byte 37", "k claims " + HUGE + " bytes");
    }

    @Test
    void rejectsHugeArrayCount() throws IOException {
        fails(header(0, 1).str("a").u32(ARRAY).u32(INT32).u64(HUGE).zeros(8).bytes(), "at byte 37",
                "metadata a claims " + HUGE + " elements of type INT32");
        fails(header(0, 1).str("a").u32(ARRAY).u32(STRING).u64(1 << 20).zeros(64).bytes(),
                "claims 1048576 elements of type STRING");
    }

    @Test
    void rejectsUnknownValueTypes() throws IOException {
        fails(header(0, 1).str("k").u32(13).zeros(8).bytes(), "at byte 37", "metadata k has unknown value type 13");
        fails(header(0, 1).str("k").u32(ARRAY).u32(99).u64(0).bytes(), "at byte 37", "array of unknown type 99");
    }

    @Test
    void rejectsBadBoolAndDeepNesting() throws IOException {
        fails(header(0, 1).str("flag").u32(BOOL).u8(2).bytes(), "at byte 40", "bool of value 2");
        LeBytes deep = header(0, 1).str("d").u32(ARRAY);
        for (int i = 0; i < 5; i++) {
            deep.u32(ARRAY).u64(1);
        }
        fails(deep.u32(INT32).u64(0).bytes(), "nests arrays deeper than 4");
    }

    @Test
    void rejectsValueCutShort() throws IOException {
        fails(header(0, 1).str("k").u32(UINT64).u32(0).bytes(), "at byte 37", "truncated", "k needs 8 bytes");
    }

    @Test
    void rejectsRepeatedNames() throws IOException {
        fails(header(0, 2).str("k").u32(UINT8).u8(1).str("k").u32(UINT8).u8(2).bytes(), "at byte 38",
                "metadata key k appears twice");
        fails(new GgufBuilder(3)
                .tensor("w", DType.F32, new long[]{1}, new byte[4])
                .tensor("w", DType.F32, new long[]{1}, new byte[4]).build(), "tensor w appears twice");
    }

    @Test
    void rejectsTensorDataPastTheEnd() throws IOException {
        byte[] ok = new GgufBuilder(3).tensor("blk.0.w", DType.F32, new long[]{8}, new byte[32]).build();
        byte[] cut = java.util.Arrays.copyOf(ok, ok.length - 4);
        fails(cut, "at byte 24", "tensor blk.0.w data (32 bytes at offset 64) runs past the end of the file (92 bytes)");
    }

    /** Two tensors over the same bytes would each read the other's values: refused, wholly or partly shared. */
    @Test
    void rejectsOverlappingTensors() throws IOException {
        fails(header(2, 0).str("a").u32(1).u64(8).u32(0).u64(0).str("b").u32(1).u64(8).u32(0).u64(0).align(32)
                .zeros(64).bytes(), "tensors a (bytes 96 to 128) and b (from byte 96) overlap");
        fails(header(2, 0).str("a").u32(1).u64(16).u32(0).u64(0).str("b").u32(1).u64(8).u32(0).u64(32).align(32)
                .zeros(96).bytes(), "tensors a (bytes 96 to 160) and b (from byte 128) overlap");
        Path adjacent = dir.resolve("adjacent.gguf");
        Files.write(adjacent, header(2, 0).str("a").u32(1).u64(16).u32(0).u64(0).str("b").u32(1).u64(8).u32(0)
                .u64(64).align(32).zeros(96).bytes());
        org.junit.jupiter.api.Assertions.assertEquals(2, GgufFile.open(adjacent).tensors().size());
    }

    @Test
    void rejectsUnsupportedAndUnknownTensorTypes() throws IOException {
        fails(tensorInfo("w", 16, 256).bytes(), "at byte 24", "tensor w has ggml type 16 (IQ2_XXS), which is not"
                + " supported");
        fails(tensorInfo("w", 99, 256).bytes(), "unknown ggml type 99");
    }

    @Test
    void rejectsShapeThatDoesNotFitTheType() throws IOException {
        fails(tensorInfo("w", DType.Q4_0.ggmlId(), 33).zeros(64).bytes(), "at byte 24",
                "tensor w of type Q4_0 has 33 columns, not a multiple of its block size 32");
    }

    @Test
    void rejectsHugeDimensionsWithoutOverflow() throws IOException {
        fails(tensorInfo("w", 0, 1L << 40, 1L << 40).bytes(), "tensor w has more elements than a file can hold");
        fails(tensorInfo("w", 0, 1L << 62).bytes(), "at byte 24", "tensor w of F32 [4611686018427387904] has more"
                + " bytes than a file can hold");
        fails(tensorInfo("w", 0, -1).bytes(), "tensor w has a negative dimension");
    }

    @Test
    void rejectsBadDimensionCount() throws IOException {
        fails(header(1, 0).str("w").u32(5).zeros(64).bytes(), "at byte 24", "tensor w has 5 dimensions, expected 1 to 4");
    }

    @Test
    void rejectsMisalignedTensorOffset() throws IOException {
        fails(header(1, 0).str("w").u32(1).u64(1).u32(0).u64(3).align(32).zeros(64).bytes(), "at byte 24",
                "tensor w has data offset 3, expected a multiple of the alignment 32");
    }

    @Test
    void rejectsAlignmentThatIsNotAPowerOfTwo() throws IOException {
        fails(new GgufBuilder(3).u32("general.alignment", 24).build(), "general.alignment is 24");
    }

    /** A file with one tensor info (dims innermost first, data offset 0) and header padding. */
    private static LeBytes tensorInfo(String name, int type, long... dimsInnermostFirst) {
        LeBytes b = header(1, 0).str(name).u32(dimsInnermostFirst.length);
        for (long d : dimsInnermostFirst) {
            b.u64(d);
        }
        return b.u32(type).u64(0).align(32);
    }
}
