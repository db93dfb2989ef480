package dev.laneway.engine.forward;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.model.ForwardCompiler;
import dev.laneway.engine.sample.Sampler;
import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A batch of several sequences, each in its own KV cache slot, computes for every sequence what it computes alone:
 * the same greedy tokens and the same logits (bit for bit where the products give every row the same bits at any
 * batch size: the reference kernels, and the int8 products of q8 and q4_1), with sequences joining mid-batch (their
 * prompt a segment beside the others' single decode rows) and leaving before the others.
 */
class BatchForwardTest {
    private static final int STEPS = 24;
    /** Plain float products on the native kernels sum a block of rows in another order than one row. */
    private static final float PLAIN_FLOAT_NATIVE_TOLERANCE = 1e-2f;

    @ParameterizedTest
    @CsvSource({"f32,java", "f32,native", "f32,fused", "q8,java", "q8,native", "q8,fused", "q4_1,native",
            "q4_1,fused"})
    void everySequenceGetsWhatItGetsAlone(String quant, String compiler) throws IOException {
        Container container = Container.open(Packed.stories260k(quant));
        Dims dims = container.dims(256);
        Kernels kernels = compiler.equals("java") ? new JavaKernels() : NativeKernels.create(2);
        try {
            LaneForward forward = (compiler.equals("fused") ? ForwardCompiler.FUSED : ForwardCompiler.PER_OP)
                    .compile(container, dims, kernels);
            float tolerance = quant.equals("f32") && !compiler.equals("java") ? PLAIN_FLOAT_NATIVE_TOLERANCE : 0f;
            List<Golden.Record> golden = Golden.stories260kPublic();
            // Sequence i joins at step join[i] and generates steps[i] tokens.
            int[] join = {0, 0, 3, 7, 7};
            int[] steps = {STEPS, 9, STEPS - 3, 12, STEPS - 7};
            List<int[]> prompts = new ArrayList<>();
            for (Golden.Record r : golden) {
                prompts.add(r.promptIds());
            }
            List<float[][]> alone = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                alone.add(alone(forward, prompts.get(i), steps[i]));
            }
            List<float[][]> together = together(forward, prompts, join, steps);
            for (int i = 0; i < prompts.size(); i++) {
                for (int t = 0; t < steps[i]; t++) {
                    float[] a = alone.get(i)[t];
                    float[] b = together.get(i)[t];
                    String where = quant + " " + compiler + ": sequence " + i + " step " + t;
                    assertEquals(Sampler.argmax(a, dims.vocab()), Sampler.argmax(b, dims.vocab()), where);
                    if (tolerance == 0f) {
                        assertArrayEquals(a, b, where);
                    } else {
                        assertArrayEquals(a, b, tolerance, where);
                    }
                }
            }
        } finally {
            if (kernels instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** The logits after the prompt and after each greedy token, the sequence alone in a one-slot state. */
    private static float[][] alone(LaneForward forward, int[] prompt, int steps) {
        ForwardState state = forward.newState(64, KvCache.Precision.F16);
        int vocab = forward.dims().vocab();
        float[][] out = new float[steps][];
        float[] logits = forward.forward(state, prompt, 0, prompt.length, 0);
        int pos = prompt.length;
        for (int t = 0; t < steps; t++) {
            out[t] = Arrays.copyOf(logits, vocab);
            if (t + 1 < steps) {
                int[] next = {Sampler.argmax(logits, vocab)};
                logits = forward.forward(state, next, 0, 1, pos++);
            }
        }
        return out;
    }

    /** The same, all sequences in one state of a slot each, every step one forward call over all running ones. */
    private static List<float[][]> together(LaneForward forward, List<int[]> prompts, int[] join, int[] steps) {
        int n = prompts.size();
        ForwardState state = forward.newState(64, n, n, KvCache.Precision.F16);
        int vocab = forward.dims().vocab();
        int stride = forward.logitsStride();
        List<float[][]> out = new ArrayList<>();
        int[] done = new int[n];
        int[] pos = new int[n];
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            out.add(new float[steps[i]][]);
        }
        for (int step = 0; ; step++) {
            Batch batch = state.batch().clear();
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (step == join[i]) {
                    batch.add(i, 0, prompts.get(i), 0, prompts.get(i).length, 1);
                    pos[i] = prompts.get(i).length;
                    order.add(i);
                } else if (step > join[i] && done[i] < steps[i]) {
                    batch.add(i, pos[i]++, next, i, 1, 1);
                    order.add(i);
                }
            }
            if (order.isEmpty()) {
                return out;
            }
            float[] logits = forward.forward(state);
            for (int r = 0; r < order.size(); r++) {
                int i = order.get(r);
                float[] row = Arrays.copyOfRange(logits, r * stride, r * stride + vocab);
                out.get(i)[done[i]++] = row;
                next[i] = Sampler.argmax(row, vocab);
            }
        }
    }
}
