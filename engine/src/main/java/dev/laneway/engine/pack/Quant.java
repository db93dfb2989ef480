package dev.laneway.engine.pack;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Matrix;

import java.util.Collection;
import java.util.Locale;

/** The weight formats {@code pack --quant} offers, and the default for a source. */
public enum Quant {
    Q8(Matrix.Layout.TILES_Q8, null),
    Q4_1(Matrix.Layout.TILES_Q4_1, null),
    BF16(null, DType.BF16),
    F32(null, DType.F32);

    private final Matrix.Layout tiles;
    private final DType plain;

    Quant(Matrix.Layout tiles, DType plain) {
        this.tiles = tiles;
        this.plain = plain;
    }

    /** The tile layout of weight matrices, or null when they are stored plain. */
    public Matrix.Layout tiles() {
        return tiles;
    }

    /** The dtype of weight matrices stored plain, or null when they are tiled. */
    public DType plain() {
        return plain;
    }

    /** The name {@code --quant} takes: {@code q8}, {@code q4_1}, {@code bf16}, {@code f32}. */
    public String optionName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a {@code --quant} value.
     *
     * @throws IllegalArgumentException naming the value and the choices
     */
    public static Quant parse(String name) {
        for (Quant q : values()) {
            if (q.optionName().equals(name)) {
                return q;
            }
        }
        throw new IllegalArgumentException("--quant " + name + ": expected one of q8, q4_1, bf16, f32");
    }

    /**
     * The default for weight matrices of these source types: q8 when any is quantized, f32 when all are F32, bf16
     * for 16-bit sources.
     */
    public static Quant defaultFor(Collection<DType> matrixTypes) {
        if (matrixTypes.stream().anyMatch(DType::quantized)) {
            return Q8;
        }
        if (matrixTypes.stream().allMatch(t -> t == DType.F32)) {
            return F32;
        }
        return BF16;
    }
}
