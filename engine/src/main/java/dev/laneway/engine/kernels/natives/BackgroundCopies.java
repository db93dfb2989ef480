package dev.laneway.engine.kernels.natives;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Weight copies made after loading, one after another on a thread of their own that runs only when a core is idle
 * (nice 19), so that a model answers from its tiles at once and switches to the faster copies as they are ready (about
 * a quarter of a second of one core for the 1B shape's 0.65 GB at q4_1, twice that at Q8; made during loading, they
 * lengthened it by 0.45 s at q4_1). A job makes a fused part's copies and swaps its handle for one that reads them;
 * products running meanwhile read the tiles, which stay valid. A job that fails (out of memory) is logged and leaves
 * the tiles in use.
 */
final class BackgroundCopies {
    private static final System.Logger LOG = System.getLogger(BackgroundCopies.class.getName());
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(() -> {
            NativeLibrary.deferToOthers();  // copies use idle cores: loading and serving go first
            r.run();
        }, "laneway-copies-" + THREADS.incrementAndGet());
        t.setDaemon(true);  // a process may exit while copies are still being made
        return t;
    });
    private volatile Future<?> last;

    /** Runs {@code job} after the jobs submitted before it. */
    synchronized void submit(Runnable job) {
        last = thread.submit(() -> {
            try {
                job.run();
            } catch (RuntimeException | OutOfMemoryError e) {
                LOG.log(System.Logger.Level.WARNING, "a weight copy was not made; products read the tiles: " + e);
            }
        });
    }

    /** Whether every job submitted so far has finished, waiting at most {@code timeout}: jobs run in order. */
    boolean await(Duration timeout) {
        Future<?> f = last;
        if (f == null) {
            return true;
        }
        try {
            f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return true;  // the job logs its own failure; it has finished
        } catch (TimeoutException e) {
            return false;
        }
    }

    /**
     * Drops the jobs not started and waits for the running one (a native copy cannot be interrupted; one matrix takes
     * milliseconds). Returns whether the thread stopped, so that the memory its copies go to may be freed.
     */
    boolean stop(Duration timeout) {
        thread.shutdownNow();
        try {
            return thread.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
