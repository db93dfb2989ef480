package dev.laneway.engine.model;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.ContainerWeights;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.FusedForward;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.natives.NativeKernels;
import dev.laneway.engine.plan.StandardPlans;

/** How a route's forward is compiled, once the container, its sizes and the kernels are known. */
public interface ForwardCompiler {

    /** The per-op forward: the container's {@code plan.json}, op by op, on any kernels ({@link PlanForward}). */
    ForwardCompiler PER_OP = new ForwardCompiler() {
        @Override
        public String name() {
            return "per-op";
        }

        @Override
        public LaneForward compile(Container container, Dims dims, Kernels kernels) {
            return PlanForward.compile(container.plan(), dims, new ContainerWeights(container.weights()), kernels);
        }
    };

    /**
     * The fused forward: each layer one native call ({@link FusedForward}). The container's plan must be one of the
     * {@link StandardPlans}, and the kernels native.
     */
    ForwardCompiler FUSED = new ForwardCompiler() {
        @Override
        public String name() {
            return "fused";
        }

        @Override
        public LaneForward compile(Container container, Dims dims, Kernels kernels) {
            StandardPlans.Recognition plan = StandardPlans.recognise(container.config().modelType(),
                    container.plan());
            StandardPlans.Variant variant = plan.variant().orElseThrow(() -> new PlanException(
                    "the fused forward runs the standard plans only: " + plan.difference()));
            if (!(kernels instanceof NativeKernels natives)) {
                throw new IllegalArgumentException("the fused forward runs on the native kernels, not on "
                        + kernels.name());
            }
            return FusedForward.compile(variant, dims, new ContainerWeights(container.weights()), natives);
        }
    };

    /**
     * The fused forward where it can run (a standard plan on the native kernels), else the per-op forward: the fast
     * lane's host kernel set, which serves every container that carries a lane.
     */
    ForwardCompiler FUSED_WHERE_POSSIBLE = new ForwardCompiler() {
        @Override
        public String name() {
            return "fused where possible";
        }

        @Override
        public LaneForward compile(Container container, Dims dims, Kernels kernels) {
            boolean standard = StandardPlans.recognise(container.config().modelType(), container.plan())
                    .variant().isPresent();
            return standard && kernels instanceof NativeKernels ? FUSED.compile(container, dims, kernels)
                    : PER_OP.compile(container, dims, kernels);
        }
    };

    /** The short name of a compiled forward for the model's metadata: {@code fused} or {@code per-op}. */
    static String nameOf(LaneForward forward) {
        return forward instanceof FusedForward ? FUSED.name() : PER_OP.name();
    }

    /** A short name for the model's metadata, e.g. {@code per-op}. */
    String name();

    /**
     * @throws PlanException            when the container's plan or weights do not fit this forward
     * @throws IllegalArgumentException when the kernels do not suit it
     */
    LaneForward compile(Container container, Dims dims, Kernels kernels);
}
