package dev.laneway.engine.q4nx;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Matrix;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Writes a {@code model.q4nx} file without holding the model in memory: every tensor is declared up front (name,
 * dtype, shape, hence its size), which fixes the header; then each tensor's bytes are streamed in, in declaration
 * order, in chunks of any size. The file is written beside its final name and moved into place by {@link #finish()};
 * closing an unfinished writer deletes the partial file.
 *
 * <pre>
 * try (Q4nxWriter w = Q4nxWriter.create(dir.resolve("model.q4nx"), Map.of(), entries)) {
 *     for (Entry e : entries) { ... w.write(e.name(), chunk) ... }
 *     w.finish();
 * }
 * </pre>
 */
public final class Q4nxWriter implements Closeable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path target;
    private final Path partial;
    private final FileChannel channel;
    private final List<Entry> entries;
    private final long[] begins;
    private final long dataOffset;
    private int current;
    private long written;
    private boolean finished;

    /**
     * A tensor to write. {@code rows} and {@code cols} are the logical matrix size of a tile tensor, 0 otherwise.
     */
    public record Entry(String name, DType dtype, long[] shape, long bytes, int rows, int cols) {
        public Entry {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            shape = shape.clone();
        }

        /** A plain tensor (norms, biases, unquantized weights): its bytes are dtype × shape. */
        public static Entry plain(String name, DType dtype, long... shape) {
            long n = 1;
            for (long d : shape) {
                if (d < 0) {
                    throw new IllegalArgumentException(name + ": negative dimension in " + Arrays.toString(shape));
                }
                n = Math.multiplyExact(n, d);
            }
            return new Entry(name, dtype, shape, dtype.bytesFor(n), 0, 0);
        }

        /** A rows × cols weight stored as tiles of {@code layout}. */
        public static Entry tiles(String name, Matrix.Layout layout, int rows, int cols) {
            if (!layout.tiled() || rows < 1 || cols < 1) {
                throw new IllegalArgumentException(name + ": " + layout + " " + rows + "x" + cols
                        + " is not a tiled matrix");
            }
            return new Entry(name, DType.I8, Q4nx.tileShape(layout, rows, cols), layout.bytes(rows, cols), rows, cols);
        }

        public boolean tiled() {
            return rows > 0;
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }
    }

    private Q4nxWriter(Path target, Path partial, FileChannel channel, List<Entry> entries, long[] begins,
                       long dataOffset) {
        this.target = target;
        this.partial = partial;
        this.channel = channel;
        this.entries = entries;
        this.begins = begins;
        this.dataOffset = dataOffset;
    }

    /**
     * Starts a container file and writes its header.
     *
     * @param file     the file to write, or a directory to write {@value Q4nx#FILE_NAME} in
     * @param metadata extra {@code __metadata__} strings; {@code format} and the {@code shape:} keys are the
     *                 writer's own
     * @param entries  every tensor, in the order their bytes will be written
     */
    public static Q4nxWriter create(Path file, Map<String, String> metadata, List<Entry> entries) throws IOException {
        Path target = Files.isDirectory(file) ? file.resolve(Q4nx.FILE_NAME) : file;
        List<Entry> list = List.copyOf(entries);
        long[] begins = layOut(list);
        byte[] header = header(metadata, list, begins);
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        FileChannel ch = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
        try {
            ByteBuffer head = ByteBuffer.allocate(8 + header.length).order(ByteOrder.LITTLE_ENDIAN);
            head.putLong(header.length).put(header).flip();
            writeFully(ch, head);
        } catch (IOException | RuntimeException e) {
            ch.close();
            Files.deleteIfExists(partial);
            throw e;
        }
        Q4nxWriter w = new Q4nxWriter(target, partial, ch, list, begins, 8L + header.length);
        w.skipEmpty();
        return w;
    }

    /** Data offsets of each entry: in order, each on a 64-byte boundary. */
    private static long[] layOut(List<Entry> entries) {
        Set<String> names = new HashSet<>();
        long[] begins = new long[entries.size()];
        long at = 0;
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (e.name().isEmpty() || e.name().equals("__metadata__") || !names.add(e.name())) {
                throw new IllegalArgumentException("tensor name '" + e.name() + "' is empty, reserved or repeated");
            }
            if (e.tiled() != (e.dtype() == DType.I8)) {
                throw new IllegalArgumentException("tensor " + e.name() + ": I8 tensors of a container are tiles, and"
                        + " tiles are I8; declare them with Entry.tiles");
            }
            long expected = e.tiled() ? Matrix.Layout.ofTileBytes(e.shape()[e.shape().length - 1])
                    .map(l -> l.bytes(e.rows(), e.cols())).orElse(-1L) : plainBytes(e);
            if (e.bytes() < 0 || e.bytes() != expected) {
                throw new IllegalArgumentException("tensor " + e.name() + " " + e.dtype() + " "
                        + Arrays.toString(e.shape()) + " declares " + e.bytes() + " bytes, its shape needs " + expected);
            }
            begins[i] = at;
            at = align(at + e.bytes());
        }
        return begins;
    }

    private static long plainBytes(Entry e) {
        long n = 1;
        for (long d : e.shape()) {
            n = Math.multiplyExact(n, d);
        }
        return e.dtype().bytesFor(n);
    }

    private static long align(long n) {
        return (n + Q4nx.ALIGNMENT - 1) / Q4nx.ALIGNMENT * Q4nx.ALIGNMENT;
    }

    private static byte[] header(Map<String, String> extra, List<Entry> entries, long[] begins) {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put(Q4nx.FORMAT_KEY, Q4nx.FORMAT);
        for (Map.Entry<String, String> m : extra.entrySet()) {
            if (m.getKey().equals(Q4nx.FORMAT_KEY) && !m.getValue().equals(Q4nx.FORMAT)
                    || m.getKey().startsWith(Q4nx.SHAPE_KEY_PREFIX)) {
                throw new IllegalArgumentException("__metadata__ key '" + m.getKey() + "' is the writer's own");
            }
            metadata.put(m.getKey(), m.getValue());
        }
        for (Entry e : entries) {
            if (e.tiled()) {
                metadata.put(Q4nx.shapeKey(e.name()), e.rows() + "," + e.cols());
            }
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("__metadata__", metadata);
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("dtype", e.dtype().name());
            t.put("shape", e.shape());
            t.put("data_offsets", new long[]{begins[i], begins[i] + e.bytes()});
            json.put(e.name(), t);
        }
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsString(json).getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
        byte[] padded = Arrays.copyOf(bytes, (int) align(bytes.length));
        Arrays.fill(padded, bytes.length, padded.length, (byte) ' ');
        return padded;
    }

    /** The tensor whose bytes come next, or null when all are written. */
    public String currentTensor() {
        return current < entries.size() ? entries.get(current).name() : null;
    }

    /**
     * Appends {@code bytes} (position to limit) to tensor {@code name}, which must be the tensor being written or,
     * once that one is complete, the next in declaration order.
     */
    public void write(String name, ByteBuffer bytes) throws IOException {
        if (finished || current >= entries.size()) {
            throw new IllegalStateException("every tensor is written; got more bytes for " + name);
        }
        Entry e = entries.get(current);
        if (!e.name().equals(name)) {
            throw new IllegalStateException("expected bytes of " + e.name() + " (" + written + " of " + e.bytes()
                    + " written), got bytes of " + name);
        }
        if (bytes.remaining() > e.bytes() - written) {
            throw new IllegalStateException(name + " is " + e.bytes() + " bytes; " + written + " are written and "
                    + bytes.remaining() + " more would overrun it");
        }
        written += bytes.remaining();
        writeFully(channel, bytes);
        if (written == e.bytes()) {
            current++;
            written = 0;
            skipEmpty();
        }
    }

    /** Moves past empty tensors, padding the file to where the next tensor begins. */
    private void skipEmpty() throws IOException {
        while (current < entries.size() && entries.get(current).bytes() == 0) {
            current++;
        }
        long next = current < entries.size() ? begins[current] : channel.position() - dataOffset;
        long gap = dataOffset + next - channel.position();
        if (gap > 0) {
            writeFully(channel, ByteBuffer.allocate((int) gap));
        }
    }

    /** Checks that every tensor is complete, then moves the file into place. */
    public void finish() throws IOException {
        if (current < entries.size()) {
            Entry e = entries.get(current);
            throw new IllegalStateException("tensor " + e.name() + " has " + written + " of its " + e.bytes()
                    + " bytes; " + (entries.size() - current) + " tensors are incomplete");
        }
        channel.force(false);
        channel.close();
        Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        finished = true;
    }

    /** Closes the file; an unfinished one is deleted. */
    @Override
    public void close() throws IOException {
        if (!finished) {
            channel.close();
            Files.deleteIfExists(partial);
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** The declared tensors, in order. */
    public List<Entry> entries() {
        return new ArrayList<>(entries);
    }
}
