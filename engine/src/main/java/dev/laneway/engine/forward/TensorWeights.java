package dev.laneway.engine.forward;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.Matrix;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Weights from tensors held by name: plain 2-D tensors (F32, F16, BF16) are matrices in place; vectors are read into
 * floats. Tiled weights are resolved by the function given, which knows the container's tile convention.
 */
public final class TensorWeights implements WeightSource {
    private final Map<String, Tensor> tensors;
    private final Function<Tensor, Optional<Matrix>> tiled;

    public TensorWeights(Map<String, Tensor> tensors, Function<Tensor, Optional<Matrix>> tiled) {
        this.tensors = Map.copyOf(tensors);
        this.tiled = tiled;
    }

    /** Weights of plain tensors only. */
    public static TensorWeights plain(Map<String, Tensor> tensors) {
        return new TensorWeights(tensors, t -> Optional.empty());
    }

    @Override
    public Optional<Matrix> matrix(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            return Optional.empty();
        }
        Matrix.Layout layout = switch (t.dtype()) {
            case F32 -> Matrix.Layout.F32;
            case F16 -> Matrix.Layout.F16;
            case BF16 -> Matrix.Layout.BF16;
            default -> null;
        };
        if (layout == null) {
            return tiled.apply(t);
        }
        if (t.rank() != 2) {
            throw new PlanException(name + " has shape " + java.util.Arrays.toString(t.shape()) + ", expected a matrix");
        }
        return Optional.of(new Matrix(name, layout, Math.toIntExact(t.dim(0)), Math.toIntExact(t.dim(1)), t.data()));
    }

    @Override
    public Optional<float[]> vector(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            return Optional.empty();
        }
        if (t.rank() != 1) {
            throw new PlanException(name + " has shape " + java.util.Arrays.toString(t.shape()) + ", expected a vector");
        }
        return Optional.of(toFloats(t));
    }

    /** A plain tensor's elements as floats. */
    static float[] toFloats(Tensor t) {
        ByteBuffer d = t.data();
        float[] out = new float[Math.toIntExact(t.elements())];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (t.dtype()) {
                case F32 -> d.getFloat(4 * i);
                case F16 -> Floats.f16ToFloat(d.getShort(2 * i));
                case BF16 -> Floats.bf16ToFloat(d.getShort(2 * i));
                default -> throw new PlanException(t.name() + " is " + t.dtype() + "; vectors must be F32, F16 or BF16");
            };
        }
        return out;
    }

}
