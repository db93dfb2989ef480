package dev.laneway.engine.model;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.FusedForward;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.plan.StandardPlans;

/** How a route's forward is compiled, once the container, its sizes and the kernels are known. */
public enum ForwardCompiler {
    /** The per-op forward: the container's {@code plan.json}, op by op, on any kernels ({@link PlanForward}). */
    PER_OP("per-op"),
    /**
     * The fused forward: each layer one native call ({@link FusedForward}). The container's plan must be one of the
     * {@link StandardPlans}, and the kernels native.
     */
    FUSED("fused"),
    /**
     * The fused forward where it can run (a standard plan on the native kernels), else the per-op forward: the fast
     * lane's host kernel set, which serves every container that carries a lane.
     */
    FUSED_WHERE_POSSIBLE("fused where possible");

    private final String label;

    ForwardCompiler(String label) {
        this.label = label;
    }

    /** A short name, e.g. {@code per-op}. */
    public String label() {
        return label;
    }

    /**
     * @throws PlanException            when the container's plan or weights do not fit this forward
     * @throws IllegalArgumentException when the kernels do not suit it
     */
    public LaneForward compile(Container container, Dims dims, Kernels kernels) {
        return switch (this) {
            case PER_OP -> perOp(container, dims, kernels);
            case FUSED -> fused(recognise(container), container, dims, kernels);
            case FUSED_WHERE_POSSIBLE -> {
                StandardPlans.Recognition plan = recognise(container);
                yield plan.variant().isPresent() && kernels instanceof NativeKernels
                        ? fused(plan, container, dims, kernels) : perOp(container, dims, kernels);
            }
        };
    }

    /** The short name of a compiled forward for the model's metadata: {@code fused} or {@code per-op}. */
    static String nameOf(LaneForward forward) {
        return forward instanceof FusedForward ? FUSED.label : PER_OP.label;
    }

    private static StandardPlans.Recognition recognise(Container container) {
        return StandardPlans.recognise(container.config().modelType(), container.plan());
    }

    private static LaneForward perOp(Container container, Dims dims, Kernels kernels) {
        return PlanForward.compile(container.plan(), dims, container.weightSource(), kernels);
    }

    private static LaneForward fused(StandardPlans.Recognition plan, Container container, Dims dims,
                                     Kernels kernels) {
        StandardPlans.Variant variant = plan.variant().orElseThrow(() -> new PlanException(
                "the fused forward runs the standard plans only: " + plan.difference()));
        if (!(kernels instanceof NativeKernels natives)) {
            throw new IllegalArgumentException("the fused forward runs on the native kernels, not on "
                    + kernels.name());
        }
        return FusedForward.compile(variant, dims, container.weightSource(), natives);
    }
}
