package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.GgufBuilder;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static dev.laneway.engine.testing.GgufBuilder.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GgufMetadataTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void readsEveryMetadataValueType(int version) throws IOException {
        Path file = new GgufBuilder(version)
                .kv("u8", UINT8, b -> b.u8(200))
                .kv("i8", INT8, b -> b.u8(-5))
                .kv("u16", UINT16, b -> b.u16(65000))
                .kv("i16", INT16, b -> b.u16(-300))
                .kv("u32", UINT32, b -> b.u32(4_000_000_000L))
                .kv("i32", INT32, b -> b.u32(-70000))
                .kv("f32", FLOAT32, b -> b.f32(1.5f))
                .kv("bool", BOOL, b -> b.u8(1))
                .kv("str", STRING, b -> b.str("héllo"))
                .kv("u64", UINT64, b -> b.u64(-1L))
                .kv("i64", INT64, b -> b.u64(-9_000_000_000L))
                .kv("f64", FLOAT64, b -> b.f64(2.25))
                .kv("ints", ARRAY, b -> b.u32(INT32).u64(3).u32(1).u32(-2).u32(3))
                .kv("u32s", ARRAY, b -> b.u32(UINT32).u64(2).u32(0xffffffffL).u32(7))
                .kv("floats", ARRAY, b -> b.u32(FLOAT32).u64(2).f32(0.5f).f32(-1f))
                .kv("doubles", ARRAY, b -> b.u32(FLOAT64).u64(1).f64(1e-300))
                .kv("bools", ARRAY, b -> b.u32(BOOL).u64(2).u8(0).u8(1))
                .kv("bytes", ARRAY, b -> b.u32(UINT8).u64(2).u8(255).u8(0))
                .kv("nested", ARRAY, b -> b.u32(ARRAY).u64(2)
                        .u32(INT16).u64(1).u16(-1)
                        .u32(STRING).u64(2).str("a").str("bc"))
                .strings("tokens", "x", "y", "z")
                .tensor("w", DType.F32, new long[]{2, 3}, floats(1, 2, 3, 4, 5, 6))
                .write(dir.resolve("all.gguf"));

        GgufFile g = GgufFile.open(file);
        assertEquals(version, g.version());
        assertEquals(200, g.get("u8").orElseThrow());
        assertEquals(-5, g.get("i8").orElseThrow());
        assertEquals(65000, g.get("u16").orElseThrow());
        assertEquals(-300, g.get("i16").orElseThrow());
        assertEquals(4_000_000_000L, g.get("u32").orElseThrow());
        assertEquals(-70000, g.get("i32").orElseThrow());
        assertEquals(1.5f, g.get("f32").orElseThrow());
        assertEquals(true, g.bool("bool").orElseThrow());
        assertEquals("héllo", g.string("str").orElseThrow());
        assertEquals(-1L, g.get("u64").orElseThrow());
        assertEquals(-9_000_000_000L, g.integer("i64").orElseThrow());
        assertEquals(2.25, g.number("f64").orElseThrow());
        assertArrayEquals(new int[]{1, -2, 3}, (int[]) g.array("ints").orElseThrow().values());
        assertArrayEquals(new long[]{0xffffffffL, 7}, (long[]) g.array("u32s").orElseThrow().values());
        assertArrayEquals(new float[]{0.5f, -1f}, (float[]) g.array("floats").orElseThrow().values());
        assertArrayEquals(new double[]{1e-300}, (double[]) g.array("doubles").orElseThrow().values());
        assertArrayEquals(new boolean[]{false, true}, (boolean[]) g.array("bools").orElseThrow().values());
        assertArrayEquals(new int[]{255, 0}, (int[]) g.array("bytes").orElseThrow().values());
        GgufArray[] nested = (GgufArray[]) g.array("nested").orElseThrow().values();
        assertArrayEquals(new int[]{-1}, (int[]) nested[0].values());
        assertArrayEquals(new String[]{"a", "bc"}, (String[]) nested[1].values());
        assertEquals(3, g.array("tokens").orElseThrow().length());

        Tensor w = g.tensor("w").orElseThrow();
        assertArrayEquals(new long[]{2, 3}, w.shape());
        assertEquals(6f, w.data().getFloat(20));
        assertTrue(w.data().isReadOnly());
    }

    @Test
    void opensEveryVocabularyOnlyFile() throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(Shared.model("vocab"), "*.gguf")) {
            s.forEach(files::add);
        }
        assertTrue(files.size() >= 6, "vocab files: " + files);
        for (Path f : files) {
            GgufFile g = GgufFile.open(f);
            assertEquals(0, g.tensors().size(), f.toString());
            assertTrue(g.array("tokenizer.ggml.tokens").orElseThrow().length() > 1000, f.toString());
        }
    }

    static byte[] floats(float... v) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(v.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }
}
