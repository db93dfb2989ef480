package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.natives.NativeCpu;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.kernels.natives.Isa;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.kernels.natives.RandomMatrices;
import dev.laneway.engine.plan.StandardPlans;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fused forward against the per-op forward on the same native kernels: every architecture variant of the
 * standard plans, every weight layout, both KV cache precisions, every code path this CPU runs, prompt batches and
 * single tokens. The fused layer runs the per-op kernels in the per-op order, so the logits must be the same bits.
 */
class FusedForwardTest {
    /** Grouped queries (4 heads over 2), a head size (24) whose heads do not add up to the width (80), as Qwen3's. */
    private static final Dims DIMS = new Dims(80, 2, 4, 2, 24, 200, 300, 1e-5f, 10000, 64);
    /** An eight-bit cache keeps heads of whole 32-element blocks; at 64 they are rotated too (Java and native alike). */
    private static final Dims Q8_DIMS = new Dims(80, 2, 4, 2, 64, 200, 300, 1e-5f, 10000, 64);
    private static final Map<Isa, NativeKernels> KERNELS = new EnumMap<>(Isa.class);

    @AfterAll
    static void closeKernels() {
        KERNELS.values().forEach(NativeKernels::close);
    }

    private static synchronized NativeKernels kernels(Isa isa) {
        return KERNELS.computeIfAbsent(isa, i -> NativeKernels.create(i, 3));
    }

    static List<StandardPlans.Variant> variants() {
        return List.of(
                StandardPlans.variant("llama", Rope.Style.INTERLEAVED, true),
                StandardPlans.variant("mistral", Rope.Style.HALVES, false),
                StandardPlans.variant("qwen2", Rope.Style.HALVES, true),
                StandardPlans.variant("qwen3", Rope.Style.HALVES, false));
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Isa isa : Isa.values()) {
            if (isa.compareTo(NativeCpu.bestIsa()) > 0) {
                continue;
            }
            for (StandardPlans.Variant v : variants()) {
                for (Layout layout : Layout.values()) {
                    for (KvCache.Precision kv : KvCache.Precision.values()) {
                        cases.add(Arguments.of(isa, v, layout, kv));
                    }
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2} kv {3}")
    @MethodSource("cases")
    void givesThePerOpForwardsLogitsBitForBit(Isa isa, StandardPlans.Variant variant, Layout layout,
                                              KvCache.Precision kv) {
        NativeKernels kernels = kernels(isa);
        Dims dims = kv == KvCache.Precision.Q8 ? Q8_DIMS : DIMS;
        RandomWeights weights = RandomWeights.of(dims, variant, layout,
                new Random(variant.hashCode() + layout.ordinal()));
        PlanForward perOp = PlanForward.compile(StandardPlans.plan(variant), dims, weights, kernels);
        FusedForward fused = FusedForward.compile(variant, dims, weights, kernels);
        ForwardState a = perOp.newState(8, kv);
        ForwardState b = fused.newState(8, kv);
        int[] tokens = new Random(7).ints(22, 0, dims.vocab()).toArray();
        int pos = 0;
        for (int n : new int[] {8, 3, 1, 1, 8, 1}) {  // prompt batches, then single tokens
            float[] expected = Arrays.copyOf(perOp.forward(a, tokens, pos, n, pos), dims.vocab());
            float[] actual = Arrays.copyOf(fused.forward(b, tokens, pos, n, pos), dims.vocab());
            for (float f : expected) {
                assertTrue(Float.isFinite(f), "the per-op logits are finite");
            }
            assertArrayEquals(expected, actual, "logits after " + n + " tokens at position " + pos);
            pos += n;
        }
    }

    private static void decode(ForwardState state, List<BoundStep> steps, int[] token, int position) {
        state.batch().clear().add(0, position, token, 0, 1, 1);
        state.prepare();
        for (int i = 0; i < steps.size(); i++) {
            steps.get(i).work().run();
        }
    }

    @Test
    void decodingAllocatesNothing() {
        NativeKernels kernels = kernels(NativeCpu.bestIsa());
        StandardPlans.Variant variant = variants().get(3);
        FusedForward fused = FusedForward.compile(variant, DIMS, RandomWeights.of(variant, Layout.TILES_Q8,
                new Random(1)), kernels);
        ForwardState state = fused.newState(4, KvCache.Precision.F16);
        List<BoundStep> steps = fused.bind(state);  // bound once, as a lane binds them
        int[] token = {5};
        for (int i = 0; i < 2000; i++) {  // warm up: compilation, the kernels' thread buffers
            decode(state, steps, token, i % 60);
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        threads.getCurrentThreadAllocatedBytes();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 2000; i++) {
            decode(state, steps, token, i % 60);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 4096, allocated + " bytes allocated by 2000 forward calls");
    }

    @Test
    void runsALayerAsOneStep() {
        StandardPlans.Variant variant = variants().get(0);
        FusedForward fused = FusedForward.compile(variant, DIMS, RandomWeights.of(variant, Layout.F32, new Random(2)),
                kernels(Isa.SCALAR));
        List<StepInfo> seen = fused.bind(fused.newState(4, KvCache.Precision.F16)).stream().map(BoundStep::info)
                .toList();
        assertEquals(List.of("embed", "fused_layer", "fused_layer", "head"), seen.stream().map(StepInfo::kernel)
                .toList());
        assertEquals(List.of(-1, 0, 1, -1), seen.stream().map(StepInfo::layer).toList());
        assertEquals("model.layers.1.self_attn.q_proj.weight", seen.get(2).tensor());
        assertTrue(fused.buffer(fused.newState(1, KvCache.Precision.F32), "work").length > 0);
    }

    @Test
    void refusesWeightsThatDoNotFitNamingTheTensor() {
        StandardPlans.Variant qwen2 = variants().get(2);
        RandomWeights weights = RandomWeights.of(qwen2, Layout.F32, new Random(3));
        weights.vectors.remove("model.layers.1.self_attn.v_proj.bias");
        PlanException missing = assertThrows(PlanException.class, () -> FusedForward.compile(qwen2, DIMS, weights,
                kernels(Isa.SCALAR)));
        assertEquals("the model has no tensor model.layers.1.self_attn.v_proj.bias", missing.getMessage());

        RandomWeights wide = RandomWeights.of(qwen2, Layout.F32, new Random(3));
        wide.matrices.put("model.layers.0.mlp.up_proj.weight", RandomWeights.matrix("model.layers.0.mlp.up_proj.weight",
                Layout.F32, 201, 80, new Random(4)));
        PlanException shape = assertThrows(PlanException.class, () -> FusedForward.compile(qwen2, DIMS, wide,
                kernels(Isa.SCALAR)));
        assertEquals("model.layers.0.mlp.up_proj.weight is 201x80, expected 200x80", shape.getMessage());
    }

    /** Random weights of a variant under the standard plans' tensor names, matrices in one layout. */
    static final class RandomWeights implements WeightSource {
        final Map<String, Matrix> matrices = new HashMap<>();
        final Map<String, float[]> vectors = new HashMap<>();

        static RandomWeights of(StandardPlans.Variant v, Layout layout, Random random) {
            return of(DIMS, v, layout, random);
        }

        static RandomWeights of(Dims dims, StandardPlans.Variant v, Layout layout, Random random) {
            RandomWeights w = new RandomWeights();
            int hidden = dims.hidden();
            w.add(StandardPlans.EMBEDDING, layout, dims.vocab(), hidden, random);
            if (!v.tiedEmbeddings()) {
                w.add(StandardPlans.HEAD, layout, dims.vocab(), hidden, random);
            }
            w.norm(StandardPlans.FINAL_NORM, hidden, random);
            for (int l = 0; l < dims.layers(); l++) {
                String at = Integer.toString(l);
                w.norm(StandardPlans.ATTN_NORM.replace("{L}", at), hidden, random);
                w.norm(StandardPlans.FFN_NORM.replace("{L}", at), hidden, random);
                for (String p : List.of("q", "k", "v")) {
                    int rows = p.equals("q") ? dims.qDim() : dims.kvDim();
                    w.add(StandardPlans.projection(p).replace("{L}", at), layout, rows, hidden, random);
                    if (v.qkvBias()) {
                        w.vectors.put(StandardPlans.projectionBias(p).replace("{L}", at),
                                scaled(RandomMatrices.gaussian(rows, random), 0.5f));
                    }
                }
                if (v.qkNorm()) {
                    w.norm(StandardPlans.Q_NORM.replace("{L}", at), dims.headDim(), random);
                    w.norm(StandardPlans.K_NORM.replace("{L}", at), dims.headDim(), random);
                }
                w.add(StandardPlans.O_PROJ.replace("{L}", at), layout, hidden, dims.qDim(), random);
                w.add(StandardPlans.GATE_PROJ.replace("{L}", at), layout, dims.ffn(), hidden, random);
                w.add(StandardPlans.UP_PROJ.replace("{L}", at), layout, dims.ffn(), hidden, random);
                w.add(StandardPlans.DOWN_PROJ.replace("{L}", at), layout, hidden, dims.ffn(), random);
            }
            return w;
        }

        static Matrix matrix(String name, Layout layout, int rows, int cols, Random random) {
            Matrix m = RandomMatrices.create(layout, rows, cols, random);
            return new Matrix(name, layout, rows, cols, m.data());
        }

        private void add(String name, Layout layout, int rows, int cols, Random random) {
            matrices.put(name, matrix(name, layout, rows, cols, random));
        }

        private void norm(String name, int n, Random random) {
            float[] v = scaled(RandomMatrices.gaussian(n, random), 0.1f);
            for (int i = 0; i < n; i++) {
                v[i] += 1;
            }
            vectors.put(name, v);
        }

        private static float[] scaled(float[] v, float factor) {
            for (int i = 0; i < v.length; i++) {
                v[i] *= factor;
            }
            return v;
        }

        @Override
        public Optional<Matrix> matrix(String name) {
            return Optional.ofNullable(matrices.get(name));
        }

        @Override
        public Optional<float[]> vector(String name) {
            return Optional.ofNullable(vectors.get(name));
        }
    }
}
