package dev.laneway.runtime.serve;

import dev.laneway.runtime.routes.DispatchException;
import dev.laneway.spi.ServedModel;

/** Opens the model the configuration names; the server calls it once, behind the already bound port. */
public interface ModelOpener {

    /**
     * @throws DispatchException when no route serves the model with the configured options
     * @throws Exception         when the model cannot be opened
     */
    ServedModel open() throws Exception;
}
