package dev.laneway.engine.container;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.PlanException;
import dev.laneway.engine.forward.WeightSource;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nxFile;
import dev.laneway.engine.quant.Dequant;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The forward's weights out of a container's weight file: matrices in place, vectors as floats. A tile tensor whose
 * size the file does not record is sized from config.json. A tensor asked for twice (a tied embedding) is the same
 * matrix both times, so kernels that prepare matrices do it once; a container that holds only {@code lm_head.weight}
 * gives it for the embedding too, its rows read from the head's tiles.
 */
public final class ContainerWeights implements WeightSource {
    private final Q4nxFile file;
    private final Function<String, Optional<int[]>> tileShapes;
    private final Map<String, Matrix> matrices = new ConcurrentHashMap<>();

    /** @param tileShapes a tile tensor's logical {@code [rows, cols]} ({@link Container#tileShape}) */
    public ContainerWeights(Q4nxFile file, Function<String, Optional<int[]>> tileShapes) {
        this.file = file;
        this.tileShapes = tileShapes;
    }

    /** Whether the embedding is read from the head's tiles, the container having no embedding of its own. */
    public static boolean embeddingFromHead(Q4nxFile file) {
        return file.tensor(StandardPlans.EMBEDDING).isEmpty() && file.tensor(StandardPlans.HEAD).isPresent();
    }

    @Override
    public Optional<Matrix> matrix(String name) {
        String stored = name.equals(StandardPlans.EMBEDDING) && embeddingFromHead(file) ? StandardPlans.HEAD : name;
        if (file.tensor(stored).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(matrices.computeIfAbsent(stored, n -> {
            try {
                if (!file.tiled(n)) {
                    return file.matrix(n);
                }
                int[] shape = tileShapes.apply(n).orElseThrow(() -> new PlanException(file.path() + ": tile tensor "
                        + n + " records no shape, and config.json gives none for a tensor of that name"));
                return file.matrix(n, shape[0], shape[1]);
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
