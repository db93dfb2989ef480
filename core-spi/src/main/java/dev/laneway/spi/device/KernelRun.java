package dev.laneway.spi.device;

import java.util.List;
import java.util.Objects;

/**
 * One kernel invocation.
 *
 * @param kernel   the kernel's name, e.g. {@code matmul} or {@code init}
 * @param layer    the layer it belongs to, or -1
 * @param position the first token position it computes, or -1
 * @param args     the buffers it reads and writes, for diagnostics
 * @param work     what the host does to run it; a device that executes elsewhere submits its own binary instead
 */
public record KernelRun(String kernel, int layer, int position, List<ArgBuffer> args, Runnable work) {
    public KernelRun {
        Objects.requireNonNull(kernel, "kernel");
        Objects.requireNonNull(work, "work");
        args = List.copyOf(args);
    }

    /** A run with nothing to do but what its name says (context set-up). */
    public static KernelRun named(String kernel) {
        return new KernelRun(kernel, -1, -1, List.of(), () -> { });
    }
}
