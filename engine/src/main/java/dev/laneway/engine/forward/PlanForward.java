package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.AttentionShape;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Rope;
import dev.laneway.engine.plan.Op;
import dev.laneway.engine.plan.Plan;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The per-op forward: executes a {@link Plan} with a set of {@link Kernels}. The plan is compiled once into steps
 * that hold their weights and buffers resolved, so a forward call does no lookups and allocates nothing.
 */
public final class PlanForward implements LaneForward {

    private final Dims dims;
    private final Kernels kernels;
    private final List<Plan.Dim> bufferDims;
    private final List<String> bufferNames;
    private final List<Step> steps;
    private final List<StepInfo> infos;
    private final int logits;
    private final int logitsStride;

    private final FinalNorm finalNorm;
    /** Each layer's RoPE (none for a layer without), for shifting the context. */
    private final Map<Integer, Rope> layerRopes;
    /** The matrices a LoRA adapter may change (every product over all rows), with their rows and columns. */
    private final Map<String, int[]> adaptable;

    private PlanForward(Dims dims, Kernels kernels, List<String> bufferNames, List<Plan.Dim> bufferDims,
                        List<Step> steps, List<StepInfo> infos, int logits, int logitsStride, FinalNorm finalNorm,
                        Map<Integer, Rope> layerRopes, Map<String, int[]> adaptable) {
        this.adaptable = adaptable;
        this.finalNorm = finalNorm;
        this.layerRopes = layerRopes;
        this.dims = dims;
        this.kernels = kernels;
        this.bufferNames = bufferNames;
        this.bufferDims = bufferDims;
        this.steps = steps;
        this.infos = infos;
        this.logits = logits;
        this.logitsStride = logitsStride;
    }

    /**
     * Compiles a plan against a model's weights.
     *
     * @throws PlanException naming the op and the tensor when a tensor is missing or has the wrong shape
     */
    public static PlanForward compile(Plan plan, Dims dims, WeightSource weights, Kernels kernels) {
        return new Compiler(plan, dims, weights, kernels).compile();
    }

    @Override
    public Dims dims() {
        return dims;
    }

    /** Every adapter whose matrices this forward multiplies by, at their shapes, applies. */
    @Override
    public void checkAdapter(dev.laneway.engine.lora.LoraAdapter adapter) {
        for (Map.Entry<String, dev.laneway.engine.lora.LoraAdapter.Pair> e : adapter.pairs().entrySet()) {
            int[] shape = adaptable.get(e.getKey());
            if (shape == null) {
                throw new IllegalArgumentException("adapter " + adapter.name() + " changes " + e.getKey()
                        + ", which is not a matrix this model multiplies every row by (adapters change the layers'"
                        + " projections)");
            }
            var p = e.getValue();
            if (p.in() != shape[1] || p.out() != shape[0]) {
                throw new IllegalArgumentException("adapter " + adapter.name() + " changes " + e.getKey() + " as "
                        + p.out() + "x" + p.in() + "; the model's is " + shape[0] + "x" + shape[1]);
            }
        }
    }

    /** The epilogue's norm of the model's final norm tensor, when the plan has one. */
    @Override
    public java.util.Optional<FinalNorm> finalNorm() {
        return java.util.Optional.ofNullable(finalNorm);
    }

    public Kernels kernels() {
        return kernels;
    }

    /** Fresh activations and a half-precision KV cache for one stream, for batches of up to {@code maxBatch}. */
    public ForwardState newState(int maxBatch) {
        return newState(maxBatch, dev.laneway.engine.kernels.KvCache.Precision.F16);
    }

    @Override
    public ForwardState newState(int maxBatch, int maxSequences, int maxLogits,
                                 dev.laneway.engine.kernels.KvCache.Precision kv) {
        return new ForwardState(bufferDims, dims, logitsStride, maxBatch, maxSequences, maxLogits, kv);
    }

    @Override
    public int logitsStride() {
        return logitsStride;
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
        return state.buffers[logits];
    }

    /**
     * Whether the context can shift: not through sliding-window layers, whose caches hold only the window's last
     * positions.
     */
    @Override
    public boolean shiftsContext() {
        return dims.sliding().size() == 0;
    }

    @Override
    public void shiftContext(KvCache cache, int slot, int keep, int discard, int used) {
        if (!shiftsContext()) {
            LaneForward.super.shiftContext(cache, slot, keep, discard, used);
        }
        cache.shift(slot, keep, discard, used, layerRopes::get);
    }

    /** A state buffer by name, for diagnostics; null when the plan has no such buffer. */
    @Override
    public float[] buffer(ForwardState state, String name) {
        int i = bufferNames.indexOf(name);
        return i < 0 ? null : state.buffers[i];
    }

    /** Resolves every op of the plan into a step. */
    private static final class Compiler {
        private final Plan plan;
        private final Dims dims;
        private final WeightSource weights;
        private final Kernels k;
        private final List<String> bufferNames = new ArrayList<>();
        private final List<Plan.Dim> bufferDims = new ArrayList<>();
        private final Map<Rope.Style, Rope> ropes = new EnumMap<>(Rope.Style.class);
        private final Map<Rope.Style, Rope> localRopes = new EnumMap<>(Rope.Style.class);
        private final Map<Integer, Rope> layerRopes = new java.util.HashMap<>();
        private final Map<String, int[]> adaptable = new java.util.HashMap<>();
        private final AttentionShape attention;
        private final AttentionShape windowed;
        /** The most rows a product into a vocabulary-wide buffer writes per token (a padded head's). */
        private int logitsStride;

        Compiler(Plan plan, Dims dims, WeightSource weights, Kernels kernels) {
            this.plan = plan;
            this.dims = dims;
            this.weights = weights;
            this.k = kernels;
            plan.buffers().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                bufferNames.add(e.getKey());
                bufferDims.add(e.getValue());
            });
            this.attention = new AttentionShape(dims.heads(), dims.kvHeads(), dims.headDim(), dims.attentionScale(),
                    0, dims.attentionSoftcap());
            this.windowed = new AttentionShape(dims.heads(), dims.kvHeads(), dims.headDim(), dims.attentionScale(),
                    dims.sliding().size(), dims.attentionSoftcap());
            this.logitsStride = dims.vocab();
        }

        PlanForward compile() {
            List<Step> steps = new ArrayList<>();
            List<StepInfo> infos = new ArrayList<>();
            for (Op op : plan.prologue()) {
                steps.add(step(op, -1, "prologue"));
                infos.add(info(op, -1));
            }
            for (int layer = 0; layer < dims.layers(); layer++) {
                for (Op op : plan.layer()) {
                    steps.add(step(op, layer, "layer " + layer));
                    infos.add(info(op, layer));
                }
            }
            FinalNorm finalNorm = null;
            for (Op op : plan.epilogue()) {
                steps.add(step(op, -1, "epilogue"));
                infos.add(info(op, -1));
                if (op instanceof Op.RmsNorm r && !r.perHead()
                        && r.weight().equals(dev.laneway.engine.plan.StandardPlans.FINAL_NORM)) {
                    finalNorm = new FinalNorm(r.in(), vector(r.weight(), -1, "epilogue"), dims.rmsEps());
                }
            }
            int logits = buffer(plan.logits());
            if (bufferDims.get(logits) != Plan.Dim.VOCAB) {
                throw new PlanException("the logits buffer '" + plan.logits() + "' must have dimension vocab");
            }
            return new PlanForward(dims, k, List.copyOf(bufferNames), List.copyOf(bufferDims), List.copyOf(steps),
                    List.copyOf(infos), logits, logitsStride, finalNorm, Map.copyOf(layerRopes), Map.copyOf(adaptable));
        }

        private static StepInfo info(Op op, int layer) {
            String tensor = op.tensors().isEmpty() ? "" : expand(op.tensors().get(0), layer);
            return new StepInfo(op.kind(), layer, tensor, op.buffers());
        }

        private Step step(Op op, int layer, String where) {
            String at = where + ", op " + op.kind();
            if (op instanceof Op.Embed e) {
                Matrix w = table(e.weight(), layer, at);
                int out = buffer(e.out());
                expect(w.cols() == width(out) && w.rows() >= dims.vocab(), at, e.weight() + " is " + w.rows() + "x"
                        + w.cols() + ", expected at least " + dims.vocab() + "x" + width(out));
                int width = width(out);
                return (s, n, pos) -> {
                    for (int b = 0; b < n; b++) {
                        k.row(w, s.batch.tokens[b], s.buffers[out], b * width);
                    }
                };
            }
            if (op instanceof Op.RmsNorm r) {
                float[] w = vector(r.weight(), layer, at);
                int in = buffer(r.in());
                int out = buffer(r.out());
                int dim = r.perHead() ? dims.headDim() : width(in);
                int rowsPerToken = width(in) / dim;
                expect(width(in) == width(out) && w.length == dim, at, r.weight() + " has " + w.length
                        + " elements, expected " + dim);
                float eps = dims.rmsEps();
                return (s, n, pos) -> k.rmsnorm(s.buffers[out], s.buffers[in], w, dim, n * rowsPerToken, eps);
            }
            if (op instanceof Op.MatMul m) {
                Matrix w = matrix(m.weight(), layer, at);
                int in = buffer(m.in());
                int out = buffer(m.out());
                expect(w.cols() == width(in) && w.rows() == width(out)
                                || (bufferDims.get(out) == Plan.Dim.VOCAB && w.cols() == width(in) && w.rows() >= width(out)),
                        at, m.weight() + " is " + w.rows() + "x" + w.cols() + ", expected " + width(out) + "x" + width(in));
                int cols = width(in);
                if (bufferDims.get(out) == Plan.Dim.VOCAB) {
                    logitsStride = Math.max(logitsStride, w.rows());
                }
                if (m.lastOnly()) {
                    // Only the rows whose logits are wanted matter: move them to the front (ascending, so no row is
                    // overwritten before it moves) and multiply those.
                    return (s, n, pos) -> {
                        Batch b = s.batch;
                        if (b.logitCount == 0) {
                            return;  // a prompt chunk that does not end its prompt
                        }
                        for (int i = 0; i < b.logitCount; i++) {
                            System.arraycopy(s.buffers[in], b.logitRows[i] * cols, s.buffers[in], i * cols, cols);
                        }
                        k.matmul(w, s.buffers[in], s.buffers[out], b.logitCount);
                    };
                }
                String name = expand(m.weight(), layer);
                int rows = width(out);
                adaptable.put(name, new int[] {w.rows(), w.cols()});
                return (s, n, pos) -> {
                    k.matmul(w, s.buffers[in], s.buffers[out], n);
                    if (s.batch.adapted) {
                        s.lora.add(k, name, s.batch, s.buffers[in], cols, s.buffers[out], rows);
                    }
                };
            }
            if (op instanceof Op.AddBias b) {
                float[] bias = vector(b.bias(), layer, at);
                int out = buffer(b.out());
                expect(bias.length == width(out), at, b.bias() + " has " + bias.length + " elements, expected "
                        + width(out));
                return (s, n, pos) -> k.addBias(s.buffers[out], bias, n);
            }
            if (op instanceof Op.RotaryEmbedding r) {
                boolean local = layer >= 0 && dims.sliding().covers(layer);
                Rope rope = (local ? localRopes : ropes).computeIfAbsent(r.style(), style -> Rope.of(style,
                        dims.headDim(), dims.rotaryDim(), dims.contextLength(),
                        local ? dims.sliding().rope() : dims.rope()));
                if (layer >= 0) {
                    layerRopes.put(layer, rope);
                }
                int q = buffer(r.q());
                int kk = buffer(r.k());
                int qHeads = width(q) / dims.headDim();
                int kHeads = width(kk) / dims.headDim();
                return (s, n, pos) -> {
                    Batch b = s.batch;
                    for (int i = 0; i < b.segments; i++) {
                        k.rope(s.buffers[q], b.firstRow[i], b.rows[i], qHeads, b.startPos[i], rope);
                        k.rope(s.buffers[kk], b.firstRow[i], b.rows[i], kHeads, b.startPos[i], rope);
                    }
                };
            }
            if (op instanceof Op.Attention a) {
                expect(layer >= 0, at, "attention belongs in the layer ops");
                int q = buffer(a.q());
                int kk = buffer(a.k());
                int v = buffer(a.v());
                int out = buffer(a.out());
                AttentionShape attention = dims.sliding().covers(layer) ? windowed : this.attention;
                expect(width(q) == attention.qDim() && width(kk) == attention.kvDim() && width(v) == attention.kvDim()
                        && width(out) == attention.qDim(), at, "buffer sizes do not match the heads");
                return (s, n, pos) -> {
                    var cache = s.cache.layer(layer);
                    Batch b = s.batch;
                    for (int i = 0; i < b.segments; i++) {
                        cache.store(s.buffers[kk], s.buffers[v], b.firstRow[i], b.rows[i], b.slot[i], b.startPos[i]);
                        k.attention(s.buffers[out], s.buffers[q], b.firstRow[i], b.rows[i], cache, b.slot[i],
                                b.startPos[i], attention);
                    }
                };
            }
            if (op instanceof Op.SiluMul m) {
                int gate = buffer(m.gate());
                int up = buffer(m.up());
                int width = width(gate);
                return (s, n, pos) -> k.siluMul(s.buffers[gate], s.buffers[up], n * width);
            }
            if (op instanceof Op.GeluMul m) {
                int gate = buffer(m.gate());
                int up = buffer(m.up());
                expect(width(gate) == width(up), at, "gate and up buffers differ in size");
                int width = width(gate);
                return (s, n, pos) -> k.geluMul(s.buffers[gate], s.buffers[up], n * width);
            }
            if (op instanceof Op.Scale c) {
                int buffer = buffer(c.buffer());
                int width = width(buffer);
                float factor = (float) c.factor();
                return (s, n, pos) -> {
                    float[] x = s.buffers[buffer];
                    for (int i = 0; i < n * width; i++) {
                        x[i] *= factor;
                    }
                };
            }
            if (op instanceof Op.SoftCap c) {
                int buffer = buffer(c.buffer());
                float cap = (float) c.cap();
                boolean logits = bufferDims.get(buffer) == Plan.Dim.VOCAB;
                int width = width(buffer);
                return (s, n, pos) -> {
                    // the logits hold the rows the head wrote, at its stride
                    int count = logits ? s.batch.logitCount * logitsStride : n * width;
                    float[] x = s.buffers[buffer];
                    for (int i = 0; i < count; i++) {
                        x[i] = cap * (float) Math.tanh(x[i] / cap);
                    }
                };
            }
            if (op instanceof Op.Add a) {
                int to = buffer(a.to());
                int from = buffer(a.from());
                int width = width(to);
                return (s, n, pos) -> k.add(s.buffers[to], s.buffers[from], n * width);
            }
            if (op instanceof Op.Moe m) {
                return mixture(m, layer, at);
            }
            throw new PlanException(at + ": op not supported by this forward");
        }

        /**
         * A mixture of experts: the router scores every row, each row keeps its best experts' weights (the others'
         * are zeroed), then each expert runs once over the rows that chose it, gathered, and its output is added to
         * theirs, weighted.
         */
        private Step mixture(Op.Moe m, int layer, String at) {
            expect(layer >= 0, at, "a mixture of experts belongs in the layer ops");
            Matrix router = matrix(m.router(), layer, at);
            Matrix[] gate = new Matrix[m.experts()];
            Matrix[] up = new Matrix[m.experts()];
            Matrix[] down = new Matrix[m.experts()];
            for (int e = 0; e < m.experts(); e++) {
                String expert = Integer.toString(e);
                gate[e] = matrix(m.gate().replace("{E}", expert), layer, at);
                up[e] = matrix(m.up().replace("{E}", expert), layer, at);
                down[e] = matrix(m.down().replace("{E}", expert), layer, at);
            }
            int in = buffer(m.in());
            int out = buffer(m.out());
            int scores = buffer("router");
            int xs = buffer("moe_x");
            int ys = buffer("moe_y");
            int hb = buffer("hb");
            int hb2 = buffer("hb2");
            int hidden = width(in);
            int ffn = width(hb);
            int experts = m.experts();
            expect(width(scores) == experts && router.rows() == experts && router.cols() == hidden, at, m.router()
                    + " is " + router.rows() + "x" + router.cols() + ", expected " + experts + "x" + hidden
                    + " (the router buffer " + width(scores) + " wide)");
            expect(width(out) == hidden && width(xs) == hidden && width(ys) == hidden && width(hb2) == ffn, at,
                    "the moe buffers do not match hidden " + hidden + " and ffn " + ffn);
            for (int e = 0; e < experts; e++) {
                expect(gate[e].rows() == ffn && gate[e].cols() == hidden && up[e].rows() == ffn
                        && up[e].cols() == hidden && down[e].rows() == hidden && down[e].cols() == ffn, at,
                        "expert " + e + "'s matrices are not " + ffn + "x" + hidden + " and " + hidden + "x" + ffn);
            }
            return (s, n, pos) -> {
                float[] x = s.buffers[in];
                float[] o = s.buffers[out];
                float[] p = s.buffers[scores];
                float[] gathered = s.buffers[xs];
                float[] result = s.buffers[ys];
                k.matmul(router, x, p, n);
                for (int r = 0; r < n; r++) {
                    ExpertChoice.choose(p, r * experts, experts, m.perToken(), m.normalize());
                }
                java.util.Arrays.fill(o, 0, n * hidden, 0f);
                for (int e = 0; e < experts; e++) {
                    int rows = 0;
                    for (int r = 0; r < n; r++) {
                        if (p[r * experts + e] != 0) {
                            System.arraycopy(x, r * hidden, gathered, rows++ * hidden, hidden);
                        }
                    }
                    if (rows == 0) {
                        continue;
                    }
                    k.matmul(gate[e], gathered, s.buffers[hb], rows);
                    k.matmul(up[e], gathered, s.buffers[hb2], rows);
                    k.siluMul(s.buffers[hb], s.buffers[hb2], rows * ffn);
                    k.matmul(down[e], s.buffers[hb], result, rows);
                    for (int r = 0, j = 0; r < n; r++) {
                        float w = p[r * experts + e];
                        if (w != 0) {
                            int to = r * hidden;
                            int from = j++ * hidden;
                            for (int i = 0; i < hidden; i++) {
                                o[to + i] += w * result[from + i];
                            }
                        }
                    }
                }
            };
        }

        private int buffer(String name) {
            int i = bufferNames.indexOf(name);
            if (i < 0) {
                throw new PlanException("the plan names an undeclared buffer: " + name);
            }
            return i;
        }

        private int width(int buffer) {
            return ForwardState.size(bufferDims.get(buffer), dims);
        }

        /** A matrix the forward multiplies by, prepared for the kernels. */
        private Matrix matrix(String template, int layer, String at) {
            Matrix m = table(template, layer, at);
            k.prepare(m);
            return m;
        }

        /** A matrix whose rows are only looked up (an embedding): the kernels need not prepare it. */
        private Matrix table(String template, int layer, String at) {
            String name = expand(template, layer);
            return weights.matrix(name).orElseThrow(() -> new PlanException(at + ": the model has no tensor "
                    + name));
        }

        private float[] vector(String template, int layer, String at) {
            String name = expand(template, layer);
            return weights.vector(name).orElseThrow(() -> new PlanException(at + ": the model has no tensor " + name));
        }

        private static String expand(String template, int layer) {
            return layer < 0 ? template : template.replace("{L}", Integer.toString(layer));
        }

        private static void expect(boolean ok, String at, String message) {
            if (!ok) {
                throw new PlanException(at + ": " + message);
            }
        }
    }
}
