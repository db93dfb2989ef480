package dev.laneway.engine.testing;

import dev.laneway.engine.format.DType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Writes small, valid GGUF files for tests; metadata values are written by callbacks on {@link LeBytes}. */
public final class GgufBuilder {
    /** gguf_metadata_value_type numbers. */
    public static final int UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
            STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12;

    private final int version;
    private final LeBytes kvs = new LeBytes();
    private int kvCount;
    private final List<TensorSpec> tensors = new ArrayList<>();

    private record TensorSpec(String name, DType type, long[] shape, byte[] data) {
    }

    public GgufBuilder(int version) {
        this.version = version;
    }

    /** A key with a value of {@code type}, written by {@code value}. */
    public GgufBuilder kv(String key, int type, Consumer<LeBytes> value) {
        kvs.str(key).u32(type);
        value.accept(kvs);
        kvCount++;
        return this;
    }

    public GgufBuilder string(String key, String v) {
        return kv(key, STRING, b -> b.str(v));
    }

    public GgufBuilder u32(String key, long v) {
        return kv(key, UINT32, b -> b.u32(v));
    }

    public GgufBuilder f32(String key, float v) {
        return kv(key, FLOAT32, b -> b.f32(v));
    }

    public GgufBuilder strings(String key, String... values) {
        return kv(key, ARRAY, b -> {
            b.u32(STRING).u64(values.length);
            for (String s : values) {
                b.str(s);
            }
        });
    }

    /** A tensor; {@code shape} is outermost first (the reader's order), written innermost first as GGUF does. */
    public GgufBuilder tensor(String name, DType type, long[] shape, byte[] data) {
        tensors.add(new TensorSpec(name, type, shape, data));
        return this;
    }

    public byte[] build() {
        LeBytes b = new LeBytes().u32(0x46554747).u32(version).u64(tensors.size()).u64(kvCount).raw(kvs.bytes());
        long offset = 0;
        for (TensorSpec t : tensors) {
            b.str(t.name).u32(t.shape.length);
            for (int d = t.shape.length - 1; d >= 0; d--) {
                b.u64(t.shape[d]);
            }
            b.u32(t.type.ggmlId()).u64(offset);
            offset += (t.data.length + 31) / 32 * 32;
        }
        b.align(32);
        for (TensorSpec t : tensors) {
            b.raw(t.data).align(32);
        }
        return b.bytes();
    }

    public Path write(Path file) throws IOException {
        Files.write(file, build());
        return file;
    }
}
