package dev.laneway.engine.forward;

import dev.laneway.engine.kernels.Matrix;

import java.util.Optional;

/** Where the forward finds its weights by tensor name: matrices in place, small vectors as floats. */
public interface WeightSource {

    /** A weight matrix, viewed in place. */
    Optional<Matrix> matrix(String name);

    /** A vector (norm weight, bias), as floats. */
    Optional<float[]> vector(String name);
}
