package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a GGUF version 3 file: metadata and tensor infos first, then each tensor's bytes in the order declared,
 * streamed so that large models are never held in memory.
 *
 * <p>Usage: {@link #put} metadata, {@link #declare} every tensor, then {@link #begin} and {@link TensorStream#write}
 * each tensor's bytes in declaration order, then {@link TensorStream#close}.
 */
public final class GgufWriter {
    private static final int ALIGNMENT = 32;

    private final Map<String, Object> metadata = new LinkedHashMap<>();
    private final List<Declared> tensors = new ArrayList<>();

    /** A declared tensor: its shape outermost first, as {@link dev.laneway.engine.format.Tensor} has it. */
    private record Declared(String name, DType dtype, long[] shape, long bytes) {
    }

    /**
     * Adds a metadata value: {@code String}, {@code Integer} (written as UINT32, as llama.cpp expects for counts and ids), {@code Long} (UINT64), {@code Float},
     * {@code Double}, {@code Boolean}, {@code String[]}, {@code float[]}, {@code int[]} (INT32 array).
     */
    public GgufWriter put(String key, Object value) {
        metadata.put(key, value);
        return this;
    }

    /** Declares a tensor; its bytes are written later, in declaration order. */
    public GgufWriter declare(String name, DType dtype, long... shape) {
        long elements = 1;
        for (long d : shape) {
            elements *= d;
        }
        long bytes = dtype.bytesFor(elements);
        if (bytes < 0 || shape[shape.length - 1] % dtype.blockSize() != 0) {
            throw new IllegalArgumentException(name + ": " + elements + " elements do not fill whole " + dtype + " blocks");
        }
        tensors.add(new Declared(name, dtype, shape.clone(), bytes));
        return this;
    }

    /** Writes the header to {@code file} and returns a stream for the tensors' bytes. */
    public TensorStream begin(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
        Out out = new Out(ch);
        out.i32(0x46554747);
        out.i32(3);
        out.i64(tensors.size());
        out.i64(metadata.size());
        for (Map.Entry<String, Object> e : metadata.entrySet()) {
            out.string(e.getKey());
            out.value(e.getKey(), e.getValue());
        }
        long offset = 0;
        for (Declared t : tensors) {
            out.string(t.name);
            out.i32(t.shape.length);
            for (int d = t.shape.length - 1; d >= 0; d--) {
                out.i64(t.shape[d]);
            }
            out.i32(t.dtype.ggmlId());
            out.i64(offset);
            offset = align(offset + t.bytes);
        }
        out.padTo(align(out.position()));
        return new TensorStream(out, tensors);
    }

    private static long align(long n) {
        return (n + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /** Receives the tensors' bytes in declaration order. */
    public static final class TensorStream implements AutoCloseable {
        private final Out out;
        private final List<Declared> tensors;
        private int index;
        private long writtenOfCurrent;

        private TensorStream(Out out, List<Declared> tensors) {
            this.out = out;
            this.tensors = tensors;
        }

        /** Appends bytes of the current tensor; moves to the next tensor once this one is complete. */
        public void write(ByteBuffer bytes) throws IOException {
            while (bytes.hasRemaining()) {
                if (index >= tensors.size()) {
                    throw new IllegalStateException("more bytes than the declared tensors hold");
                }
                Declared t = tensors.get(index);
                int n = (int) Math.min(bytes.remaining(), t.bytes - writtenOfCurrent);
                ByteBuffer part = bytes.slice();
                part.limit(n);
                out.write(part);
                bytes.position(bytes.position() + n);
                writtenOfCurrent += n;
                if (writtenOfCurrent == t.bytes) {
                    out.padTo(align(out.position()));
                    index++;
                    writtenOfCurrent = 0;
                }
            }
        }

        /** The name of the tensor whose bytes come next. */
        public String current() {
            return index < tensors.size() ? tensors.get(index).name : null;
        }

        @Override
        public void close() throws IOException {
            try {
                if (index != tensors.size()) {
                    throw new IllegalStateException("tensor " + current() + " and those after it were not written");
                }
                out.flush();
            } finally {
                out.channel.close();
            }
        }
    }

    /** Little-endian buffered output with a running position. */
    private static final class Out {
        private final FileChannel channel;
        private final ByteBuffer buf = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        private long flushed;

        Out(FileChannel channel) {
            this.channel = channel;
        }

        long position() {
            return flushed + buf.position();
        }

        void room(int n) throws IOException {
            if (buf.remaining() < n) {
                flush();
            }
        }

        void flush() throws IOException {
            buf.flip();
            while (buf.hasRemaining()) {
                flushed += channel.write(buf);
            }
            buf.clear();
        }

        void i32(int v) throws IOException {
            room(4);
            buf.putInt(v);
        }

        void i64(long v) throws IOException {
            room(8);
            buf.putLong(v);
        }

        void string(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i64(b.length);
            write(ByteBuffer.wrap(b));
        }

        void write(ByteBuffer bytes) throws IOException {
            while (bytes.hasRemaining()) {
                room(1);
                int n = Math.min(buf.remaining(), bytes.remaining());
                ByteBuffer part = bytes.slice();
                part.limit(n);
                buf.put(part);
                bytes.position(bytes.position() + n);
            }
        }

        void padTo(long target) throws IOException {
            while (position() < target) {
                room(1);
                buf.put((byte) 0);
            }
        }

        /** gguf_metadata_value_type ids: UINT32 4, INT32 5, FLOAT32 6, BOOL 7, STRING 8, ARRAY 9, UINT64 10, FLOAT64 12. */
        void value(String key, Object v) throws IOException {
            if (v instanceof String s) {
                i32(8);
                string(s);
            } else if (v instanceof Integer n) {
                i32(4);
                i32(n);
            } else if (v instanceof Long n) {
                i32(10);
                i64(n);
            } else if (v instanceof Float f) {
                i32(6);
                i32(Float.floatToRawIntBits(f));
            } else if (v instanceof Double d) {
                i32(12);
                i64(Double.doubleToRawLongBits(d));
            } else if (v instanceof Boolean b) {
                i32(7);
                room(1);
                buf.put((byte) (b ? 1 : 0));
            } else if (v instanceof String[] a) {
                i32(9);
                i32(8);
                i64(a.length);
                for (String s : a) {
                    string(s);
                }
            } else if (v instanceof float[] a) {
                i32(9);
                i32(6);
                i64(a.length);
                for (float f : a) {
                    i32(Float.floatToRawIntBits(f));
                }
            } else if (v instanceof int[] a) {
                i32(9);
                i32(5);
                i64(a.length);
                for (int n : a) {
                    i32(n);
                }
            } else {
                throw new IllegalArgumentException("metadata " + key + ": cannot write a " + v.getClass().getName());
            }
        }
    }
}
