package dev.laneway.engine.pack;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Matrix;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/** The weight formats {@code pack --quant} offers, and the default for a source. */
public enum Quant {
    Q8(Matrix.Layout.TILES_Q8, null),
    Q4_1(Matrix.Layout.TILES_Q4_1, null),
    /** Made only from GGUF Q4_K blocks (their own codes, scales and minima): the default for such matrices. */
    Q4_K(Matrix.Layout.TILES_Q4_K, null),
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

    /** The name {@code --quant} takes: {@code q8}, {@code q4_1}, {@code q4_k}, {@code bf16}, {@code f32}. */
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
        throw new IllegalArgumentException("--quant " + name + ": expected one of q8, q4_1, q4_k, bf16, f32");
    }

    /** The format of each weight matrix: {@code --quant}'s when given, else {@link #defaultFor}. */
    public static Function<DType, Quant> chosen(Optional<String> option, Collection<DType> matrixTypes) {
        if (option.isPresent()) {
            Quant q = parse(option.get());
            return source -> q;
        }
        return defaultFor(matrixTypes);
    }

    /**
     * The format of each weight matrix when {@code --quant} is not given, from the source types of all of them: a
     * quantized source keeps its bits, each matrix on its own (Q4_K blocks become {@code Q4_K} tiles and Q4_0 and Q4_1
     * blocks {@code q4_1} tiles, with the same codes; every other matrix {@code q8}), so a 4-bit file is served at 4
     * bits, as llama.cpp would serve it; otherwise {@code f32} when all are F32 and {@code bf16} for 16-bit sources.
     */
    public static Function<DType, Quant> defaultFor(Collection<DType> matrixTypes) {
        if (matrixTypes.stream().anyMatch(DType::quantized)) {
            return source -> source == DType.Q4_K ? Q4_K : FOUR_BIT_EXACT.contains(source) ? Q4_1 : Q8;
        }
        Quant all = matrixTypes.stream().allMatch(t -> t == DType.F32) ? F32 : BF16;
        return source -> all;
    }

    /** The block types whose codes {@code q4_1} tiles hold exactly. */
    private static final Set<DType> FOUR_BIT_EXACT = EnumSet.of(DType.Q4_0, DType.Q4_1);
}
