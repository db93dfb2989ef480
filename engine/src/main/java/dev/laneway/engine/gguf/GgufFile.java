package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A GGUF file (versions 2 and 3): its metadata, and its tensors memory-mapped in place.
 *
 * <pre>
 * struct gguf_header_t {
 *     uint32_t magic;              // "GGUF"
 *     uint32_t version;            // 2 or 3 (1 used 32-bit counts)
 *     uint64_t tensor_count;
 *     uint64_t metadata_kv_count;
 *     gguf_metadata_kv_t metadata_kv[metadata_kv_count];   // key string, uint32 value type, value
 * };
 * gguf_tensor_info_t tensor_infos[tensor_count];           // name, uint32 n_dims, uint64 ne[n_dims],
 *                                                          // uint32 ggml_type, uint64 offset
 * padding to general.alignment (default 32), then the tensor data
 * </pre>
 */
public final class GgufFile {
    /** "GGUF" read as a little-endian uint32. */
    private static final int MAGIC = 0x46554747;
    private static final int DEFAULT_ALIGNMENT = 32;
    private static final int MAX_DIMS = 4;

    private final Path path;
    private final int version;
    private final Map<String, Object> metadata;
    private final List<Tensor> tensors;
    private final long dataOffset;

    private GgufFile(Path path, int version, Map<String, Object> metadata, List<Tensor> tensors, long dataOffset) {
        this.path = path;
        this.version = version;
        this.metadata = Collections.unmodifiableMap(metadata);
        this.tensors = List.copyOf(tensors);
        this.dataOffset = dataOffset;
    }

    /** Reads a GGUF file's header and maps its tensors. */
    public static GgufFile open(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            GgufReader in = new GgufReader(path, ch);
            if (in.size() < 24) {
                throw new FormatException(path, 0, "truncated header: a GGUF file starts with 24 header bytes, the file has "
                        + in.size());
            }
            int magic = in.i32("magic");
            if (magic != MAGIC) {
                throw new FormatException(path, 0, String.format("wrong magic 0x%08x, expected \"GGUF\" (0x%08x)",
                        magic, MAGIC));
            }
            int version = in.i32("version");
            if (version != 2 && version != 3) {
                String hint = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                        ? " (a big-endian GGUF file, which is not supported)" : "";
                throw new FormatException(path, 4, "unsupported GGUF version " + Integer.toUnsignedString(version)
                        + ", expected 2 or 3" + hint);
            }
            long tensorCount = in.i64("tensor count");
            long kvCount = in.i64("metadata count");
            // Each key-value pair takes at least 12 bytes, each tensor info at least 24: a count beyond that is corrupt.
            checkCount(in, kvCount, 12, "metadata");
            Map<String, Object> metadata = new LinkedHashMap<>();
            for (long i = 0; i < kvCount; i++) {
                long at = in.position();
                String key = in.string("metadata key #" + i);
                int type = in.i32("type of " + key);
                if (metadata.put(key, GgufValues.read(in, type, key, 0)) != null) {
                    throw new FormatException(path, at, "metadata key " + key + " appears twice");
                }
            }
            checkCount(in, tensorCount, 24, "tensor");
            List<TensorInfo> infos = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (long i = 0; i < tensorCount; i++) {
                TensorInfo info = readTensorInfo(in, i);
                if (!names.add(info.name)) {
                    throw new FormatException(path, info.infoOffset, "tensor " + info.name + " appears twice");
                }
                infos.add(info);
            }
            long alignment = alignment(path, metadata);
            // A file without tensors may end without the padding that would precede their data.
            if (!infos.isEmpty()) {
                in.align(alignment);
            }
            long dataOffset = in.position();
            List<Tensor> tensors = new ArrayList<>(infos.size());
            for (TensorInfo info : infos) {
                tensors.add(map(path, ch, info, dataOffset, alignment));
            }
            checkOverlaps(path, infos, dataOffset);
            return new GgufFile(path, version, metadata, tensors, dataOffset);
        }
    }

    /** Where a tensor's info said its data is, before mapping. */
    private record TensorInfo(String name, long infoOffset, long[] shape, DType dtype, long offset, long elements) {
    }

    private static void checkCount(GgufReader in, long count, int minBytes, String what) throws FormatException {
        if (count < 0 || count > in.remaining() / minBytes) {
            throw new FormatException(in.file(), in.position(), "truncated: the header claims "
                    + Long.toUnsignedString(count) + " " + what + " entries, the file has " + in.remaining()
                    + " bytes left");
        }
    }

    private static TensorInfo readTensorInfo(GgufReader in, long index) throws IOException {
        long at = in.position();
        String name = in.string("name of tensor #" + index);
        int nDims = in.i32("dimension count of tensor " + name);
        if (nDims < 1 || nDims > MAX_DIMS) {
            throw new FormatException(in.file(), at, "tensor " + name + " has " + Integer.toUnsignedString(nDims)
                    + " dimensions, expected 1 to " + MAX_DIMS);
        }
        long[] ne = new long[nDims];
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            ne[d] = in.i64("dimension " + d + " of tensor " + name);
            if (ne[d] < 0) {
                throw new FormatException(in.file(), at, "tensor " + name + " has a negative dimension");
            }
            elements = ne[d] == 0 ? 0 : (elements > Long.MAX_VALUE / ne[d] ? -1 : elements * ne[d]);
            if (elements < 0) {
                throw new FormatException(in.file(), at, "tensor " + name + " has more elements than a file can hold");
            }
        }
        int typeId = in.i32("type of tensor " + name);
        DType dtype = DType.ofGgml(typeId).orElseThrow(() -> new FormatException(in.file(), at,
                "tensor " + name + " has " + GgmlTypeNames.describe(typeId) + ", which is not supported"));
        long offset = in.i64("data offset of tensor " + name);
        long[] shape = new long[nDims];
        for (int d = 0; d < nDims; d++) {
            shape[d] = ne[nDims - 1 - d];
        }
        return new TensorInfo(name, at, shape, dtype, offset, elements);
    }

    /**
     * Refuses tensors whose data overlap: one tensor's bytes read as another's would give both wrong values. (Each has
     * been mapped already, so its size is known not to overflow.)
     */
    private static void checkOverlaps(Path path, List<TensorInfo> infos, long dataOffset) throws FormatException {
        List<TensorInfo> sorted = new ArrayList<>(infos);
        sorted.sort(java.util.Comparator.comparingLong(TensorInfo::offset));
        for (int i = 1; i < sorted.size(); i++) {
            TensorInfo a = sorted.get(i - 1);
            TensorInfo b = sorted.get(i);
            long aEnd = a.offset + a.dtype.bytesFor(a.elements);
            if (b.offset < aEnd && b.dtype.bytesFor(b.elements) > 0) {
                throw new FormatException(path, b.infoOffset, "tensors " + a.name + " (bytes " + (dataOffset
                        + a.offset) + " to " + (dataOffset + aEnd) + ") and " + b.name + " (from byte "
                        + (dataOffset + b.offset) + ") overlap");
            }
        }
    }

    private static Tensor map(Path path, FileChannel ch, TensorInfo t, long dataOffset, long alignment)
            throws IOException {
        if (t.shape[t.shape.length - 1] % t.dtype.blockSize() != 0) {
            throw new FormatException(path, t.infoOffset, "tensor " + t.name + " of type " + t.dtype + " has "
                    + t.shape[t.shape.length - 1] + " columns, not a multiple of its block size " + t.dtype.blockSize());
        }
        long bytes;
        try {
            bytes = t.dtype.bytesFor(t.elements);
        } catch (ArithmeticException e) {
            throw new FormatException(path, t.infoOffset, "tensor " + t.name + " of " + t.dtype + " "
                    + java.util.Arrays.toString(t.shape) + " has more bytes than a file can hold");
        }
        if (t.offset < 0 || t.offset % alignment != 0) {
            throw new FormatException(path, t.infoOffset, "tensor " + t.name + " has data offset "
                    + Long.toUnsignedString(t.offset) + ", expected a multiple of the alignment " + alignment);
        }
        long start = dataOffset + t.offset;
        if (start < dataOffset || start + bytes > ch.size() || start + bytes < start) {
            throw new FormatException(path, t.infoOffset, "tensor " + t.name + " data (" + bytes + " bytes at offset "
                    + start + ") runs past the end of the file (" + ch.size() + " bytes)");
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new FormatException(path, t.infoOffset, "tensor " + t.name + " is " + bytes
                    + " bytes; tensors over 2 GiB are not supported");
        }
        MappedByteBuffer data = ch.map(FileChannel.MapMode.READ_ONLY, start, bytes);
        data.order(ByteOrder.LITTLE_ENDIAN);
        return new Tensor(t.name, t.dtype, t.shape, data);
    }

    private static long alignment(Path path, Map<String, Object> metadata) throws FormatException {
        Object a = metadata.get("general.alignment");
        if (a == null) {
            return DEFAULT_ALIGNMENT;
        }
        if (!(a instanceof Number n) || n.longValue() <= 0 || Long.bitCount(n.longValue()) != 1) {
            throw new FormatException(path, "general.alignment is " + a + ", expected a power of two");
        }
        return n.longValue();
    }

    public Path path() {
        return path;
    }

    public int version() {
        return version;
    }

    /** Every metadata value by key, in file order. See {@link GgufValues} for the Java types. */
    public Map<String, Object> metadata() {
        return metadata;
    }

    /** Every tensor, in file order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    /** The file offset where tensor data starts. */
    public long dataOffset() {
        return dataOffset;
    }

    public Optional<Tensor> tensor(String name) {
        return tensors.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /** A metadata value, if present. */
    public Optional<Object> get(String key) {
        return Optional.ofNullable(metadata.get(key));
    }

    /** A string value, if present and a string. */
    public Optional<String> string(String key) {
        return get(key).filter(String.class::isInstance).map(String.class::cast);
    }

    /** An integer value of any width, if present. */
    public Optional<Long> integer(String key) {
        return get(key).filter(v -> v instanceof Integer || v instanceof Long).map(v -> ((Number) v).longValue());
    }

    /** A floating-point (or integer) value, if present. */
    public Optional<Double> number(String key) {
        return get(key).filter(Number.class::isInstance).map(v -> ((Number) v).doubleValue());
    }

    public Optional<Boolean> bool(String key) {
        return get(key).filter(Boolean.class::isInstance).map(Boolean.class::cast);
    }

    /** An array value, if present. */
    public Optional<GgufArray> array(String key) {
        return get(key).filter(GgufArray.class::isInstance).map(GgufArray.class::cast);
    }
}
