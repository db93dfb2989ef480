package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.KvCache;

import java.util.List;

/**
 * A forward submitted to the device as one run per forward call: all layers, then the output head, in one
 * submission, as a lane's fixed kernel set runs a token. Diagnostics name the submission and its position.
 */
public final class OneSubmissionForward implements LaneForward {
    /** The kernel name of a whole-token submission. */
    public static final String KERNEL = "lane_token";

    private final LaneForward inner;
    private final StepInfo info;

    public OneSubmissionForward(LaneForward inner) {
        this.inner = inner;
        this.info = new StepInfo(KERNEL, -1, "", List.of("x", "logits"));
    }

    @Override
    public Dims dims() {
        return inner.dims();
    }

    @Override
    public int logitsStride() {
        return inner.logitsStride();
    }

    @Override
    public ForwardState newState(int maxBatch, int maxSequences, int maxLogits, KvCache.Precision kv) {
        return inner.newState(maxBatch, maxSequences, maxLogits, kv);
    }

    /** One step: every step of the inner forward, in order. */
    @Override
    public List<BoundStep> bind(ForwardState state) {
        List<BoundStep> steps = inner.bind(state);
        return List.of(new BoundStep(info, () -> {
            for (BoundStep step : steps) {
                step.work().run();
            }
        }));
    }

    @Override
    public float[] logits(ForwardState state) {
        return inner.logits(state);
    }

    @Override
    public java.util.Optional<FinalNorm> finalNorm() {
        return inner.finalNorm();
    }

    @Override
    public float[] buffer(ForwardState state, String name) {
        return inner.buffer(state, name);
    }

    @Override
    public void checkAdapter(dev.laneway.engine.lora.LoraAdapter adapter) {
        inner.checkAdapter(adapter);
    }
}
