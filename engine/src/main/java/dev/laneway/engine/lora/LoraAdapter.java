package dev.laneway.engine.lora;

import dev.laneway.engine.kernels.Matrix;
import dev.laneway.spi.ModelAdapter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Map;

/**
 * A LoRA adapter: for each matrix W it changes, a pair A ({@code rank × in}) and B ({@code out × rank}) such that a
 * product {@code W·x} becomes {@code W·x + s·B·(A·x)}, s being the pair's {@link Pair#scale} times the scale the
 * generation asks for. Read by {@link LoraReader}; the pairs are float matrices in native memory, so that any kernels
 * multiply by them.
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
     * One matrix's low-rank pair.
     *
     * @param a     {@code rank × in}
     * @param b     {@code out × rank}
     * @param scale {@code alpha / rank} ({@code alpha / √rank} for rank-stabilised PEFT adapters), or 1 without an
         *              alpha (as llama.cpp scales)
     */
    public record Pair(Matrix a, Matrix b, float scale) {
        public Pair {
            if (a.rows() != b.cols()) {
                throw new IllegalArgumentException(a.name() + " has rank " + a.rows() + " and " + b.name() + " "
                        + b.cols());
            }
        }

        public int rank() {
            return a.rows();
        }

        /** A pair from row-major floats. */
        static Pair of(String name, float[] a, float[] b, int rank, int in, int out, float scale) {
            return new Pair(matrix(name + ".lora_a", a, rank, in), matrix(name + ".lora_b", b, out, rank), scale);
        }

        private static Matrix matrix(String name, float[] values, int rows, int cols) {
            ByteBuffer data = ByteBuffer.allocateDirect(values.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            data.asFloatBuffer().put(values);
            return new Matrix(name, Matrix.Layout.F32, rows, cols, data);
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
