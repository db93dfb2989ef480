package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.lora.AdapterSet;
import dev.laneway.engine.lora.LoraAdapter;

/**
 * A fused layer call's LoRA jobs ({@link NativeKernels#runLayer}): for each adapter of the batch and each of the
 * layer's seven matrices it changes, its pair and the scale of every row (0 for rows that do not apply it). Refilled
 * for every call from a forward state's arrays, grown on first use.
 */
final class LoraJobs {
    long[] fields = new long[0];
    float[] scales = new float[0];
    int count;

    /**
     * Fills the jobs of {@code b} for the layer whose matrices are {@code matrices} (q, k, v, o, gate, up, down, by
     * name).
     */
    LoraJobs fill(NativeKernels kernels, Batch b, String[] matrices) {
        count = 0;
        int rows = b.totalRows;
        for (int s = 0; s < b.segments; s++) {
            AdapterSet set = b.adapters[s];
            for (int j = 0; set != null && j < set.size(); j++) {
                LoraAdapter adapter = set.adapter(j);
                if (b.appliedBefore(s, adapter)) {
                    continue;
                }
                for (int target = 0; target < matrices.length; target++) {
                    LoraAdapter.Pair pair = adapter.pair(matrices[target]);
                    if (pair != null) {
                        add(kernels, b, rows, target, adapter, pair);
                    }
                }
            }
        }
        return this;
    }

    private void add(NativeKernels kernels, Batch b, int rows, int target, LoraAdapter adapter,
                     LoraAdapter.Pair pair) {
        if ((count + 1) * NativeKernels.LORA_FIELDS > fields.length) {
            fields = java.util.Arrays.copyOf(fields, Math.max(16, 2 * (count + 1)) * NativeKernels.LORA_FIELDS);
        }
        if ((count + 1) * rows > scales.length) {
            scales = java.util.Arrays.copyOf(scales, 2 * (count + 1) * rows);
        }
        int at = count * NativeKernels.LORA_FIELDS;
        fields[at] = target;
        kernels.loraMatrix(pair.a(), fields, at + 1);
        kernels.loraMatrix(pair.bt(), fields, at + 8);
        int row = count * rows;
        for (int s = 0; s < b.segments; s++) {
            java.util.Arrays.fill(scales, row + b.firstRow[s], row + b.firstRow[s] + b.rows[s],
                    b.scale(s, adapter) * pair.scale());
        }
        count++;
    }
}
