package dev.laneway.engine.forward;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.generate.Generator;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.pack.GgufNames;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class GgufForwardProbe {
    @Test
    void greedyFromBos() throws Exception {
        GgufFile g = GgufFile.open(Shared.stories260kGguf());
        Map<String, Tensor> byHf = new HashMap<>();
        for (Tensor t : g.tensors()) {
            GgufNames.toHuggingFace(t.name()).ifPresent(n -> byHf.put(n, t));
        }
        Dims dims = new Dims(64, 5, 8, 4, 8, 172, 512, 1e-5f, 10000, 2048);
        var plan = StandardPlans.plan(StandardPlans.variant("llama", Rope.Style.INTERLEAVED, !byHf.containsKey("lm_head.weight")));
        PlanForward f = PlanForward.compile(plan, dims, TensorWeights.plain(byHf), new JavaKernels());
        var golden = new ObjectMapper().readTree(Shared.golden("stories260K-greedy-from-bos.json").toFile());
        List<Integer> expected = new ArrayList<>();
        golden.get("ids").forEach(n -> expected.add(n.asInt()));
        List<Integer> got = new ArrayList<>();
        got.add(1);
        var state = f.newState(8);
        new Generator(dims, 8, new int[]{2}).generate((t, o, n, p) -> f.forward(state, t, o, n, p), new GenerationRequest(new int[]{1}, expected.size() - 1,
                Sampling.GREEDY), t -> got.add(t.id()) || true);
        assertEquals(expected, got);
    }
}
