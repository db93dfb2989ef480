package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.LayerWeights;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.kernels.natives.FusedHead;
import dev.laneway.engine.kernels.natives.FusedLayer;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.plan.StandardPlans;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static dev.laneway.engine.plan.StandardPlans.ofLayer;

/**
 * The fused forward of a dense llama-family model (the {@link StandardPlans}: llama and mistral, Qwen2's q/k/v
 * biases, Qwen3's per-head q/k norms, either RoPE style, grouped-query attention, a tied or separate head): the
 * embedding lookup, then each layer as one native call ({@link NativeKernels#runLayer}), then the output head as one
 * ({@link NativeKernels#runHead}). A
 * forward call is {@code layers + 2} steps where the per-op forward ({@link PlanForward}) takes about fifteen per
 * layer, with as many hand-offs to the kernels' threads and the lane; the kernels inside are the same, run in the same
 * order, so the logits are the same bits.
 *
 * <p>Shapes come from the model's config ({@link Dims}); nothing is specialised per model. Weights stay where the
 * container's mapping put them (or in the kernels' compact copies); a call allocates nothing.
 */
public final class FusedForward implements LaneForward {
    /** The kernel name of a layer's step, as diagnostics show it. */
    public static final String LAYER_KERNEL = "fused_layer";
    /** The kernel name of the embedding lookup's step. */
    public static final String EMBED_KERNEL = "embed";
    /** The kernel name of the output head's step (final RMSNorm and the logits). */
    public static final String HEAD_KERNEL = "head";

    private static final List<String> BUFFERS = List.of("x", "work", "logits");
    private static final int X = 0;
    private static final int WORK = 1;
    private static final int LOGITS = 2;

    private final Dims dims;
    private final LayerShape shape;
    private final int logitsLength;
    private final FinalNorm finalNorm;
    private final List<Step> steps;
    private final List<StepInfo> infos;
    /** Every layer's RoPE, for shifting the context. */
    private final Rope rope;

    private FusedForward(Dims dims, LayerShape shape, int logitsLength, List<Step> steps, List<StepInfo> infos,
                         FinalNorm finalNorm, Rope rope) {
        this.finalNorm = finalNorm;
        this.rope = rope;
        this.dims = dims;
        this.shape = shape;
        this.logitsLength = logitsLength;
        this.steps = steps;
        this.infos = infos;
    }

    /**
     * Readies a model of the given variant for the fused forward: every matrix is prepared first (so the kernels see
     * the whole model's size), then each layer is fused.
     *
     * @throws PlanException naming the tensor when one is missing or has the wrong shape
     */
    public static FusedForward compile(StandardPlans.Variant variant, Dims dims, WeightSource weights,
                                       NativeKernels kernels) {
        if (!dims.uniformLayers()) {
            throw new PlanException("the fused forward runs layers that attend fully and scale by 1/√head_dim; this "
                    + "model has sliding-window layers or another attention scale");
        }
        int hidden = dims.hidden();
        AttentionShape attention = new AttentionShape(dims.heads(), dims.kvHeads(), dims.headDim(),
                (float) (1.0 / Math.sqrt(dims.headDim())));
        LayerShape shape = new LayerShape(hidden, attention, dims.ffn(), dims.rmsEps());
        Tensors tensors = new Tensors(weights, kernels);

        Matrix embedding = tensors.table(StandardPlans.EMBEDDING, hidden, variant.tiedEmbeddings());
        Matrix head = variant.tiedEmbeddings() ? embedding : tensors.table(StandardPlans.HEAD, hidden, true);
        float[] finalNorm = tensors.vector(StandardPlans.FINAL_NORM, hidden);
        for (Matrix m : new Matrix[] {embedding, head}) {
            if (m.rows() < dims.vocab()) {
                throw new PlanException(m.name() + " has " + m.rows() + " rows, fewer than the vocabulary's "
                        + dims.vocab());
            }
        }
        List<LayerWeights> layers = new ArrayList<>();
        for (int l = 0; l < dims.layers(); l++) {
            layers.add(tensors.layer(variant, l, shape));
        }

        Rope rope = Rope.of(variant.ropeStyle(), dims.headDim(), dims.rotaryDim(), dims.contextLength(),
                dims.rope());
        List<Step> steps = new ArrayList<>();
        List<StepInfo> infos = new ArrayList<>();
        steps.add((s, n, pos) -> {
            for (int b = 0; b < n; b++) {
                kernels.row(embedding, s.batch.tokens[b], s.buffers[X], b * hidden);
            }
        });
        infos.add(new StepInfo(EMBED_KERNEL, -1, embedding.name(), List.of("x")));
        for (int l = 0; l < layers.size(); l++) {
            FusedLayer layer = fuse(kernels, layers.get(l), shape, rope, l);
            int index = l;
            String[] matrices = adaptable(l);
            steps.add((s, n, pos) -> {
                LoraJobs lora = s.loraJobs;
                if (s.batch.adapted) {
                    lora.fill(kernels, s.batch, matrices);
                } else {
                    lora.count = 0;
                }
                kernels.runLayer(layer, s.buffers[X], s.buffers[WORK], s.cache.layer(index), n, s.batch.quads,
                        s.batch.segments, lora.fields, lora.scales, lora.count);
            });
            infos.add(new StepInfo(LAYER_KERNEL, l, ofLayer(StandardPlans.projection("q"), l), List.of("x", "work")));
        }
        FusedHead fusedHead = kernels.fuseHead(head, finalNorm, dims.rmsEps());
        steps.add((s, n, pos) -> {
            if (s.batch.logitCount > 0) {  // none for a prompt chunk that does not end its prompt
                kernels.runHead(fusedHead, s.buffers[X], n, s.batch.logitRows, s.batch.logitCount, s.buffers[WORK],
                        s.buffers[LOGITS]);
            }
        });
        infos.add(new StepInfo(HEAD_KERNEL, -1, head.name(), List.of("x", "logits")));
        // The layers leave each row's hidden state in x; the head normalises its rows into its own work memory.
        return new FusedForward(dims, shape, Math.max(dims.vocab(), head.rows()), List.copyOf(steps),
                List.copyOf(infos), new FinalNorm("x", finalNorm, dims.rmsEps()), rope);
    }

    /** Layer l's matrices a LoRA adapter may change, in the order of the fused layer's LoRA targets. */
    private static String[] adaptable(int l) {
        return java.util.stream.Stream.of(StandardPlans.projection("q"), StandardPlans.projection("k"),
                StandardPlans.projection("v"), StandardPlans.O_PROJ, StandardPlans.GATE_PROJ, StandardPlans.UP_PROJ,
                StandardPlans.DOWN_PROJ).map(t -> ofLayer(t, l)).toArray(String[]::new);
    }

    /** An adapter applies when it changes only layers' projections, at their shapes. */
    @Override
    public void checkAdapter(dev.laneway.engine.lora.LoraAdapter adapter) {
        int[] ins = shape.projectionInputs();
        int[] outs = shape.projectionOutputs();
        java.util.Map<String, Integer> targets = new java.util.HashMap<>();
        for (int l = 0; l < dims.layers(); l++) {
            String[] names = adaptable(l);
            for (int t = 0; t < names.length; t++) {
                targets.put(names[t], t);
            }
        }
        for (var e : adapter.pairs().entrySet()) {
            Integer t = targets.get(e.getKey());
            if (t == null) {
                throw new IllegalArgumentException("adapter " + adapter.name() + " changes " + e.getKey()
                        + ", which is not one of the layers' projections (adapters change those)");
            }
            var p = e.getValue();
            if (p.in() != ins[t] || p.out() != outs[t]) {
                throw new IllegalArgumentException("adapter " + adapter.name() + " changes " + e.getKey() + " as "
                        + p.out() + "x" + p.in() + "; the model's is " + outs[t] + "x" + ins[t]);
            }
        }
    }

    @Override
    public boolean shiftsContext() {
        return true;
    }

    @Override
    public void shiftContext(KvCache cache, int slot, int keep, int discard, int used) {
        cache.shift(slot, keep, discard, used, layer -> rope);
    }

    private static FusedLayer fuse(NativeKernels kernels, LayerWeights weights, LayerShape shape, Rope rope, int l) {
        try {
            return kernels.fuse(weights, shape, rope);
        } catch (IllegalArgumentException e) {
            throw new PlanException("layer " + l + ": " + e.getMessage());
        }
    }

    @Override
    public Dims dims() {
        return dims;
    }

    /** Fresh activations ({@code x}, the layers' {@code work}, {@code logits}) and a KV cache with a slot per sequence. */
    @Override
    public ForwardState newState(int maxBatch, int maxSequences, int maxLogits, KvCache.Precision kv) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be positive, got " + maxBatch);
        }
        long[] lengths = {(long) maxBatch * dims.hidden(), shape.workFloats(maxBatch),
                (long) ForwardState.logitRows(maxBatch, maxLogits) * logitsLength};
        return new ForwardState(lengths, dims, maxBatch, maxSequences, maxLogits, kv);
    }

    @Override
    public List<BoundStep> bind(ForwardState state) {
        Batch b = state.batch;
        List<BoundStep> bound = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            bound.add(new BoundStep(infos.get(i), () -> step.run(state, b.totalRows, b.firstPosition())));
        }
        return bound;
    }

    @Override
    public float[] logits(ForwardState state) {
        return state.buffers[LOGITS];
    }

    @Override
    public int logitsStride() {
        return logitsLength;
    }

    @Override
    public java.util.Optional<FinalNorm> finalNorm() {
        return java.util.Optional.of(finalNorm);
    }

    @Override
    public float[] buffer(ForwardState state, String name) {
        int i = BUFFERS.indexOf(name);
        return i < 0 ? null : state.buffers[i];
    }

    /** Looks tensors up by name, checking their shapes, and prepares each matrix on the kernels. */
    private record Tensors(WeightSource weights, NativeKernels kernels) {

        LayerWeights layer(StandardPlans.Variant v, int l, LayerShape shape) {
            int hidden = shape.hidden();
            int q = shape.attention().qDim();
            int kv = shape.attention().kvDim();
            int headDim = shape.attention().headDim();
            Optional<LayerWeights.Biases> biases = v.qkvBias()
                    ? Optional.of(new LayerWeights.Biases(vector(ofLayer(StandardPlans.projectionBias("q"), l), q),
                            vector(ofLayer(StandardPlans.projectionBias("k"), l), kv),
                            vector(ofLayer(StandardPlans.projectionBias("v"), l), kv)))
                    : Optional.empty();
            Optional<LayerWeights.HeadNorms> norms = v.qkNorm()
                    ? Optional.of(new LayerWeights.HeadNorms(vector(ofLayer(StandardPlans.Q_NORM, l), headDim),
                            vector(ofLayer(StandardPlans.K_NORM, l), headDim)))
                    : Optional.empty();
            return new LayerWeights(
                    vector(ofLayer(StandardPlans.ATTN_NORM, l), hidden),
                    matrix(StandardPlans.projection("q"), l, q, hidden),
                    matrix(StandardPlans.projection("k"), l, kv, hidden),
                    matrix(StandardPlans.projection("v"), l, kv, hidden),
                    biases, norms,
                    matrix(StandardPlans.O_PROJ, l, hidden, q),
                    vector(ofLayer(StandardPlans.FFN_NORM, l), hidden),
                    matrix(StandardPlans.GATE_PROJ, l, shape.ffn(), hidden),
                    matrix(StandardPlans.UP_PROJ, l, shape.ffn(), hidden),
                    matrix(StandardPlans.DOWN_PROJ, l, hidden, shape.ffn()));
        }

        /**
         * A matrix of {@code cols} columns and a row per token at least (the embedding, the head), prepared for the
         * kernels if it is {@code multiplied} (an embedding that is not the head only has rows looked up).
         */
        Matrix table(String name, int cols, boolean multiplied) {
            Matrix m = multiplied ? lookUp(name) : weights.matrix(name).orElseThrow(() -> new PlanException(
                    "the model has no tensor " + name));
            if (m.cols() != cols) {
                throw new PlanException(name + " is " + m.rows() + "x" + m.cols() + ", expected " + cols
                        + " columns");
            }
            return m;
        }

        Matrix matrix(String template, int layer, int rows, int cols) {
            String name = ofLayer(template, layer);
            Matrix m = lookUp(name);
            if (m.rows() != rows || m.cols() != cols) {
                throw new PlanException(name + " is " + m.rows() + "x" + m.cols() + ", expected " + rows + "x" + cols);
            }
            return m;
        }

        float[] vector(String name, int length) {
            float[] v = weights.vector(name).orElseThrow(() -> new PlanException("the model has no tensor " + name));
            if (v.length != length) {
                throw new PlanException(name + " has " + v.length + " elements, expected " + length);
            }
            return v;
        }

        private Matrix lookUp(String name) {
            Matrix m = weights.matrix(name).orElseThrow(() -> new PlanException("the model has no tensor " + name));
            kernels.prepare(m);
            return m;
        }
    }
}
