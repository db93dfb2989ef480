package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.lora.AdapterSet;
import dev.laneway.engine.lora.LoraAdapter;

/**
 * Adds the LoRA adapters' products to a matrix product's rows: after {@code out = W·in} over every row of the batch,
 * each adapter that changes W runs once over the rows that apply it, gathered ({@code t = A·x}, {@code d = B·t}), and
 * {@code scale·d} is added to those rows, as a mixture of experts runs each expert over the rows that chose it. B is
 * kept transposed, so {@code d} is the sum of B's columns weighted by {@code t}. The scratch rows are a forward
 * state's, grown on first use.
 */
final class LoraProducts {
    private float[] x = new float[0];
    private float[] t = new float[0];
    private float[] d = new float[0];
    private float[] btRow = new float[0];

    /** Adds the batch's adapters' products for {@code matrix} ({@code outCols × inCols}) to {@code out}. */
    void add(Kernels k, String matrix, Batch b, float[] in, int inCols, float[] out, int outCols) {
        for (int s = 0; s < b.segments; s++) {
            AdapterSet set = b.adapters[s];
            for (int j = 0; set != null && j < set.size(); j++) {
                LoraAdapter adapter = set.adapter(j);
                LoraAdapter.Pair pair = adapter.pair(matrix);
                if (pair != null && !b.appliedBefore(s, adapter)) {
                    add(k, pair, adapter, s, b, in, inCols, out, outCols);
                }
            }
        }
    }

    private void add(Kernels k, LoraAdapter.Pair pair, LoraAdapter adapter, int from, Batch b, float[] in,
                     int inCols, float[] out, int outCols) {
        int rank = pair.rank();
        int rows = 0;
        for (int e = from; e < b.segments; e++) {
            if (b.scale(e, adapter) != 0) {
                rows += b.rows[e];
            }
        }
        x = atLeast(x, rows * inCols);
        t = atLeast(t, rows * rank);
        d = atLeast(d, rows * outCols);
        int at = 0;
        for (int e = from; e < b.segments; e++) {
            if (b.scale(e, adapter) != 0) {
                System.arraycopy(in, b.firstRow[e] * inCols, x, at * inCols, b.rows[e] * inCols);
                at += b.rows[e];
            }
        }
        k.matmul(pair.a(), x, t, rows);
        java.util.Arrays.fill(d, 0, rows * outCols, 0f);
        btRow = atLeast(btRow, outCols);
        for (int i = 0; i < rank; i++) {
            // row i of Bᵀ read (and widened) once for all rows; each output still sums over i in order
            for (int o = 0; o < outCols; o++) {
                btRow[o] = LoraAdapter.Pair.at(pair.bt(), i * outCols + o);
            }
            for (int r = 0; r < rows; r++) {
                float ti = t[r * rank + i];
                for (int o = 0; o < outCols; o++) {
                    d[r * outCols + o] += ti * btRow[o];
                }
            }
        }
        at = 0;
        for (int e = from; e < b.segments; e++) {
            float scale = b.scale(e, adapter) * pair.scale();
            if (scale == 0) {
                continue;
            }
            int to = b.firstRow[e] * outCols;
            int n = b.rows[e] * outCols;
            int src = at * outCols;
            for (int i = 0; i < n; i++) {
                out[to + i] += scale * d[src + i];
            }
            at += b.rows[e];
        }
    }

    private static float[] atLeast(float[] a, int n) {
        return a.length >= n ? a : new float[Math.max(n, a.length * 2)];
    }
}
