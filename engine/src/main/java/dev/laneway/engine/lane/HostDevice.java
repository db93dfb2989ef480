package dev.laneway.engine.lane;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceContext;
import dev.laneway.spi.device.KernelRun;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The host CPU: always there, any number of contexts. A context runs each kernel on the calling thread, so a run
 * ends when its work does; there is nothing to wait for.
 */
public final class HostDevice implements Device {
    /** The {@code --device} name of the host. */
    public static final String NAME = "cpu";

    private final AtomicLong ids = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger live = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String kind() {
        return "cpu";
    }

    @Override
    public int maxContexts() {
        return 0;
    }

    @Override
    public int liveContexts() {
        return live.get();
    }

    @Override
    public DeviceContext open(Duration timeout) {
        long id = ids.incrementAndGet();
        live.incrementAndGet();
        return new DeviceContext() {
            private boolean closed;

            @Override
            public long id() {
                return id;
            }

            @Override
            public void run(KernelRun run, Duration deadline) {
                run.work().run();
            }

            @Override
            public void abort() {
                // A host run is never left in flight: it has ended by the time its caller could abort it.
            }

            @Override
            public void close() {
                if (!closed) {
                    closed = true;
                    live.decrementAndGet();
                }
            }
        };
    }
}
