package dev.laneway.engine.safetensors;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A safetensors file, its tensors memory-mapped in place.
 *
 * <pre>
 * u64 N                 little-endian header length
 * N bytes of JSON       {"__metadata__": {string: string}, name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}
 * data                  each tensor at [begin, end) relative to the first byte after the header
 * </pre>
 *
 * Every length and offset is checked against the file before anything is allocated or mapped. Tensors must not
 * overlap; gaps between them are allowed (the Q4NX container aligns tensors to 64 bytes).
 */
public final class SafetensorsFile {
    /** Headers beyond this size are treated as corruption rather than read onto the heap. */
    public static final long MAX_HEADER_BYTES = 100L << 20;
    static final String METADATA_KEY = "__metadata__";

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private final Path path;
    private final long headerLength;
    private final Map<String, String> metadata;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;

    private SafetensorsFile(Path path, long headerLength, Map<String, String> metadata, List<Tensor> tensors) {
        this.path = path;
        this.headerLength = headerLength;
        this.metadata = Collections.unmodifiableMap(metadata);
        this.tensors = List.copyOf(tensors);
        Map<String, Tensor> map = new LinkedHashMap<>();
        tensors.forEach(t -> map.put(t.name(), t));
        this.byName = Collections.unmodifiableMap(map);
    }

    /** Reads the header and maps every tensor. */
    public static SafetensorsFile open(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < 8) {
                throw new FormatException(path, 0, "truncated header: a safetensors file starts with an 8-byte header"
                        + " length, the file has " + size + " bytes");
            }
            long n = readFully(ch, path, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            if (n < 2 || n > size - 8) {
                throw new FormatException(path, 0, "header length " + Long.toUnsignedString(n) + " does not fit: the"
                        + " file has " + (size - 8) + " bytes after the 8-byte length");
            }
            if (n > MAX_HEADER_BYTES) {
                throw new FormatException(path, 0, "header length " + n + " is over the " + MAX_HEADER_BYTES
                        + "-byte limit for a safetensors header");
            }
            JsonNode header = parse(path, readFully(ch, path, 8, (int) n).array());
            long dataOffset = 8 + n;
            Map<String, String> metadata = metadata(path, header.get(METADATA_KEY));
            List<Entry> entries = entries(path, header, size - dataOffset, dataOffset);
            checkOverlaps(path, entries, dataOffset);
            List<Tensor> tensors = new ArrayList<>(entries.size());
            for (Entry e : entries) {
                ByteBuffer data = ch.map(FileChannel.MapMode.READ_ONLY, dataOffset + e.begin, e.end - e.begin);
                tensors.add(new Tensor(e.name, e.dtype, e.shape, data));
            }
            return new SafetensorsFile(path, n, metadata, tensors);
        }
    }

    /** A header entry, checked against the data size. */
    private record Entry(String name, DType dtype, long[] shape, long begin, long end) {
    }

    private static ByteBuffer readFully(FileChannel ch, Path path, long at, int n) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(n);
        while (buf.hasRemaining()) {
            if (ch.read(buf, at + buf.position()) < 0) {
                throw new FormatException(path, at + buf.position(), "unexpected end of file");
            }
        }
        return buf.flip();
    }

    private static JsonNode parse(Path path, byte[] json) throws FormatException {
        JsonNode header;
        try {
            header = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            long at = e.getLocation() == null ? 8 : 8 + Math.max(0, e.getLocation().getByteOffset());
            throw new FormatException(path, at, "header is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new FormatException(path, 8, "header is not valid JSON: " + e.getMessage());
        }
        if (header == null || !header.isObject()) {
            throw new FormatException(path, 8, "header is " + (header == null ? "empty" : "a JSON "
                    + header.getNodeType().toString().toLowerCase()) + ", expected a JSON object of tensors");
        }
        return header;
    }

    private static Map<String, String> metadata(Path path, JsonNode node) throws FormatException {
        Map<String, String> metadata = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return metadata;
        }
        if (!node.isObject()) {
            throw new FormatException(path, 8, METADATA_KEY + " is not a JSON object");
        }
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isTextual()) {
                throw new FormatException(path, 8, METADATA_KEY + "." + e.getKey() + " is " + e.getValue()
                        + ", expected a string");
            }
            metadata.put(e.getKey(), e.getValue().textValue());
        }
        return metadata;
    }

    private static List<Entry> entries(Path path, JsonNode header, long dataSize, long dataOffset)
            throws FormatException {
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<String, JsonNode> field : header.properties()) {
            if (!field.getKey().equals(METADATA_KEY)) {
                entries.add(entry(path, field.getKey(), field.getValue(), dataSize, dataOffset));
            }
        }
        return entries;
    }

    private static Entry entry(Path path, String name, JsonNode node, long dataSize, long dataOffset)
            throws FormatException {
        if (!node.isObject()) {
            throw new FormatException(path, 8, "tensor " + name + " is " + node.getNodeType().toString().toLowerCase()
                    + ", expected an object with dtype, shape and data_offsets");
        }
        JsonNode dtypeNode = node.get("dtype");
        if (dtypeNode == null || !dtypeNode.isTextual()) {
            throw new FormatException(path, 8, "tensor " + name + " has no dtype string");
        }
        DType dtype = DType.ofSafetensors(dtypeNode.textValue()).orElseThrow(() -> new FormatException(path, 8,
                "tensor " + name + " has unknown dtype \"" + dtypeNode.textValue()
                        + "\", expected one of F32, F16, BF16, F64, I8, U8, I16, I32, I64, BOOL"));
        long[] shape = longs(path, name, "shape", node.get("shape"), -1);
        long[] offsets = longs(path, name, "data_offsets", node.get("data_offsets"), 2);
        long begin = offsets[0];
        long end = offsets[1];
        if (begin > end || end > dataSize) {
            throw new FormatException(path, dataOffset + begin, "tensor " + name + " data_offsets [" + begin + ", "
                    + end + "] are out of range: the data after the header holds " + dataSize + " bytes");
        }
        long need = bytes(path, name, dtype, shape);
        if (need != end - begin) {
            throw new FormatException(path, dataOffset + begin, "tensor " + name + " of " + dtype + " "
                    + Arrays.toString(shape) + " needs " + need + " bytes, its data_offsets [" + begin + ", " + end
                    + "] hold " + (end - begin));
        }
        if (need > Integer.MAX_VALUE) {
            throw new FormatException(path, dataOffset + begin, "tensor " + name + " is " + need
                    + " bytes; tensors over 2 GiB are not supported");
        }
        return new Entry(name, dtype, shape, begin, end);
    }

    private static long bytes(Path path, String name, DType dtype, long[] shape) throws FormatException {
        try {
            long n = 1;
            for (long d : shape) {
                n = Math.multiplyExact(n, d);
            }
            return Math.multiplyExact(n, (long) dtype.blockBytes());
        } catch (ArithmeticException e) {
            throw new FormatException(path, 8, "tensor " + name + " shape " + Arrays.toString(shape)
                    + " has more elements than a file can hold");
        }
    }

    /** A JSON array of non-negative integers ({@code count} of them unless negative). */
    private static long[] longs(Path path, String name, String field, JsonNode node, int count)
            throws FormatException {
        String expected = count < 0 ? "an array of non-negative integers" : "an array of " + count
                + " non-negative integers";
        if (node == null || !node.isArray() || (count >= 0 && node.size() != count)) {
            throw new FormatException(path, 8, "tensor " + name + " " + field + " is " + node + ", expected "
                    + expected);
        }
        long[] values = new long[node.size()];
        for (int i = 0; i < values.length; i++) {
            JsonNode v = node.get(i);
            if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
                throw new FormatException(path, 8, "tensor " + name + " " + field + " is " + node + ", expected "
                        + expected);
            }
            values[i] = v.longValue();
        }
        return values;
    }

    private static void checkOverlaps(Path path, List<Entry> entries, long dataOffset) throws FormatException {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        for (int i = 1; i < sorted.size(); i++) {
            Entry a = sorted.get(i - 1);
            Entry b = sorted.get(i);
            if (b.begin < a.end) {
                throw new FormatException(path, dataOffset + b.begin, "tensors " + a.name + " [" + a.begin + ", "
                        + a.end + "] and " + b.name + " [" + b.begin + ", " + b.end + "] overlap");
            }
        }
    }

    public Path path() {
        return path;
    }

    /** N, the JSON header's length in bytes. */
    public long headerLength() {
        return headerLength;
    }

    /** The file offset of the first data byte, 8 + N; data_offsets count from here. */
    public long dataOffset() {
        return 8 + headerLength;
    }

    /** The {@code __metadata__} strings, empty if the header has none. */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** Every tensor, in header order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> tensor(String name) {
        return Optional.ofNullable(byName.get(name));
    }
}
