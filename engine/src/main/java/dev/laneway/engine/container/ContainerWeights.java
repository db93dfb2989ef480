package dev.laneway.engine.container;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.forward.WeightSource;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The forward's weights out of a container's weight file: matrices in place, vectors as floats. A tensor asked for
 * twice (a tied embedding) is the same matrix both times, so kernels that prepare matrices do it once.
 */
public final class ContainerWeights implements WeightSource {
    private final Q4nxFile file;
    private final Map<String, Matrix> matrices = new ConcurrentHashMap<>();

    public ContainerWeights(Q4nxFile file) {
        this.file = file;
    }

    @Override
    public Optional<Matrix> matrix(String name) {
        if (file.tensor(name).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(matrices.computeIfAbsent(name, n -> {
            try {
                return file.matrix(n);
            } catch (FormatException e) {
                throw new PlanException(e.getMessage());
            }
        }));
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
