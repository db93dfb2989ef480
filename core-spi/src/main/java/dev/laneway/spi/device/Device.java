package dev.laneway.spi.device;

import java.time.Duration;

/** Something that runs kernels: the host CPU, an NPU, a GPU. Thread-safe. */
public interface Device {

    /** The name it was asked for by, e.g. {@code cpu} or {@code chaos:cpu?p=0.05}. */
    String name();

    /** What it is: {@code cpu}, {@code npu}, {@code gpu}, ... */
    String kind();

    /** How many contexts this process may hold open at once; 0 for no limit. */
    int maxContexts();

    /** Contexts open right now, or -1 when the device does not count them. */
    default int liveContexts() {
        return -1;
    }

    /**
     * Opens a fresh context, waiting at most {@code timeout}.
     *
     * @throws DeviceFault when the device does not give a context in time or fails
     */
    DeviceContext open(Duration timeout);
}
