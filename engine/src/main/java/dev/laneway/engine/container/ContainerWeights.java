package dev.laneway.engine.container;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.forward.WeightSource;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;

import java.util.Optional;

/** The forward's weights out of a container's weight file: matrices in place, vectors as floats. */
public final class ContainerWeights implements WeightSource {
    private final Q4nxFile file;

    public ContainerWeights(Q4nxFile file) {
        this.file = file;
    }

    @Override
    public Optional<Matrix> matrix(String name) {
        if (file.tensor(name).isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(file.matrix(name));
        } catch (FormatException e) {
            throw new PlanException(e.getMessage());
        }
    }

    @Override
    public Optional<float[]> vector(String name) {
        Optional<Tensor> t = file.tensor(name);
        if (t.isEmpty()) {
            return Optional.empty();
        }
        if (t.get().rank() != 1) {
            throw new PlanException(file.path() + ": " + name + " should be a vector, has shape "
                    + java.util.Arrays.toString(t.get().shape()));
        }
        return Optional.of(Dequant.toFloat(t.get()));
    }
}
