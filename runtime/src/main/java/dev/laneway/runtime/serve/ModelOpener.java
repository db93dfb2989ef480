package dev.laneway.runtime.serve;

import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.spi.ServedModel;

/** Opens a model the server serves, each time it loads, behind the already bound port. */
public interface ModelOpener {

    /**
     * @throws DispatchException when no route serves the model with its options
     * @throws Exception         when the model cannot be opened
     */
    ServedModel open(ModelSpec spec) throws Exception;
}
