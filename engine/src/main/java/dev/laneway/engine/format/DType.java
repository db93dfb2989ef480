package dev.laneway.engine.format;

import java.util.Locale;
import java.util.Optional;

/**
 * The element types of tensors in GGUF, safetensors and container files. Block types store {@link #blockSize()}
 * elements in {@link #blockBytes()} bytes; plain types have a block of one element.
 */
public enum DType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    BF16(30, 1, 2),
    /** Safetensors' unsigned byte; no GGUF id. */
    U8(-1, 1, 1),
    /** Safetensors' boolean; no GGUF id. */
    BOOL(-2, 1, 1);

    private final int ggmlId;
    private final int blockSize;
    private final int blockBytes;

    DType(int ggmlId, int blockSize, int blockBytes) {
        this.ggmlId = ggmlId;
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
    }

    /** The {@code ggml_type} number in GGUF files; negative when GGUF has none. */
    public int ggmlId() {
        return ggmlId;
    }

    /** Elements per block. */
    public int blockSize() {
        return blockSize;
    }

    /** Bytes per block. */
    public int blockBytes() {
        return blockBytes;
    }

    /** Whether elements are stored in quantized blocks. */
    public boolean quantized() {
        return blockSize > 1;
    }

    /**
     * Bytes that {@code elements} elements take, or -1 when the count is not a whole number of blocks.
     */
    public long bytesFor(long elements) {
        if (elements % blockSize != 0) {
            return -1;
        }
        return Math.multiplyExact(elements / blockSize, (long) blockBytes);
    }

    /** The type with this {@code ggml_type} number. */
    public static Optional<DType> ofGgml(int id) {
        for (DType t : values()) {
            if (t.ggmlId == id && id >= 0) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    /** The type with this safetensors dtype name ({@code F32}, {@code BF16}, {@code I8}, ...). */
    public static Optional<DType> ofSafetensors(String name) {
        return switch (name.toUpperCase(Locale.ROOT)) {
            case "F32" -> Optional.of(F32);
            case "F16" -> Optional.of(F16);
            case "BF16" -> Optional.of(BF16);
            case "F64" -> Optional.of(F64);
            case "I8" -> Optional.of(I8);
            case "U8" -> Optional.of(U8);
            case "I16" -> Optional.of(I16);
            case "I32" -> Optional.of(I32);
            case "I64" -> Optional.of(I64);
            case "BOOL" -> Optional.of(BOOL);
            default -> Optional.empty();
        };
    }
}
