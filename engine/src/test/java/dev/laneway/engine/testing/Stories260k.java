package dev.laneway.engine.testing;

import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.forward.TensorWeights;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.pack.GgufNames;
import dev.laneway.engine.plan.StandardPlans;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

/** The stories260K model's forward, read straight from its GGUF file: a real model small enough for every test. */
public final class Stories260k {
    /** Its sizes (dim 64, 5 layers, 8 heads, 4 KV heads, ffn 172, vocab 512), with a short context for tests. */
    public static final Dims DIMS = new Dims(64, 5, 8, 4, 8, 172, 512, 1e-5f, 10000, 256);
    public static final int BOS = 1;
    public static final int EOS = 2;

    private static PlanForward forward;

    private Stories260k() {
    }

    /** The forward on the reference kernels, compiled once per test JVM. */
    public static synchronized PlanForward forward() {
        if (forward == null) {
            try {
                GgufFile g = GgufFile.open(Shared.stories260kGguf());
                Map<String, Tensor> byHf = new HashMap<>();
                for (Tensor t : g.tensors()) {
                    GgufNames.toHuggingFace(t.name(), "llama").ifPresent(n -> byHf.put(n, t));
                }
                var plan = StandardPlans.plan(StandardPlans.variant("llama", Rope.Style.INTERLEAVED, true));
                forward = PlanForward.compile(plan, DIMS, TensorWeights.plain(byHf), new JavaKernels());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return forward;
    }
}
