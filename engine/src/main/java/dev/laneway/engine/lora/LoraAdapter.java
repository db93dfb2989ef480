package dev.laneway.engine.lora;

import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.spi.ModelAdapter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Map;

/**
 * A LoRA adapter: for each matrix W it changes, a pair A ({@code rank × in}) and B ({@code out × rank}) such that a
 * product {@code W·x} becomes {@code W·x + s·B·(A·x)}, s being the pair's {@link Pair#scale} times the scale the
 * generation asks for. Read by {@link LoraReader}; the pairs are float or half-precision matrices in native memory, so
 * that any kernels multiply by them.
 *
 * @param name   the name requests use
 * @param path   where it was read from
 * @param alpha  its {@code alpha}; 0 when it has none
 * @param pairs  by the name of the model's matrix (the container's, Hugging Face's), in file order
 * @param serial this reading's number in the process, which tells a reloaded adapter from the one it replaced
 */
public record LoraAdapter(String name, Path path, float alpha, Map<String, Pair> pairs, long serial) {
    private static final java.util.concurrent.atomic.AtomicLong READINGS = new java.util.concurrent.atomic.AtomicLong();

    /** A new reading, numbered. */
    public LoraAdapter(String name, Path path, float alpha, Map<String, Pair> pairs) {
        this(name, path, alpha, pairs, READINGS.incrementAndGet());
    }

    public LoraAdapter {
        pairs = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(pairs));
    }

    /**
     * One matrix's low-rank pair, B kept transposed: the products add {@code t[i]·Bᵀ[i]} to an output row, rank
     * times, each a contiguous run of outputs. They keep the file's precision: half precision where the file has it
     * (as llama.cpp's converter writes adapters by default: half the bytes to read per step), else float.
     *
     * @param a     {@code rank × in}
     * @param bt    B transposed, {@code rank × out}
     * @param scale {@code alpha / rank} ({@code alpha / √rank} for rank-stabilised PEFT adapters), or 1 without an
     *              alpha (as llama.cpp scales)
     */
    public record Pair(Matrix a, Matrix bt, float scale) {
        public Pair {
            if (a.rows() != bt.rows()) {
                throw new IllegalArgumentException(a.name() + " has rank " + a.rows() + " and " + bt.name() + " "
                        + bt.rows());
            }
        }

        public int rank() {
            return a.rows();
        }

        /** The columns of the matrix it changes. */
        public int in() {
            return a.cols();
        }

        /** The rows of the matrix it changes. */
        public int out() {
            return bt.cols();
        }

        /** A pair from row-major floats: A {@code rank × in}, B {@code out × rank}, kept in half precision or not. */
        static Pair of(String name, float[] a, float[] b, int rank, int in, int out, float scale, boolean half) {
            float[] bt = new float[b.length];
            for (int o = 0; o < out; o++) {
                for (int i = 0; i < rank; i++) {
                    bt[i * out + o] = b[o * rank + i];
                }
            }
            return new Pair(matrix(name + ".lora_a", a, rank, in, half), matrix(name + ".lora_b", bt, rank, out, half),
                    scale);
        }

        private static Matrix matrix(String name, float[] values, int rows, int cols, boolean half) {
            Matrix.Layout layout = half ? Matrix.Layout.F16 : Matrix.Layout.F32;
            ByteBuffer data = ByteBuffer.allocateDirect(values.length * layout.elementBytes())
                    .order(ByteOrder.LITTLE_ENDIAN);
            for (float v : values) {
                if (half) {
                    data.putShort(Floats.floatToF16(v));  // read from half precision: exact
                } else {
                    data.putFloat(v);
                }
            }
            return new Matrix(name, layout, rows, cols, data.flip());
        }

        /** Element {@code i} (row-major) of {@code m}, a pair's matrix. */
        public static float at(Matrix m, int i) {
            return m.layout() == Matrix.Layout.F16 ? Floats.f16ToFloat(m.data().getShort(2 * i))
                    : m.data().getFloat(4 * i);
        }
    }

    /** The pair that changes {@code matrix}, or null. */
    public Pair pair(String matrix) {
        return pairs.get(matrix);
    }

    /** The largest rank of its pairs. */
    public int rank() {
        return pairs.values().stream().mapToInt(Pair::rank).max().orElse(0);
    }

    /** What the server lists. */
    public ModelAdapter describe() {
        return new ModelAdapter(name, path, rank(), alpha, pairs.size());
    }
}
