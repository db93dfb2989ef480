package dev.laneway.engine.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * A result worked out on a daemon thread of its own while the caller does other work: loading steps that need
 * nothing from each other overlap, on a machine with a core to spare.
 *
 * @param <T> what the work gives
 */
public final class BackgroundResult<T> {
    /** Work that may fail with an {@link IOException}. */
    public interface Work<T> {
        T run() throws IOException;
    }

    private final CompletableFuture<T> result = new CompletableFuture<>();

    private BackgroundResult() {
    }

    /** Starts {@code work} on a new thread named {@code threadName}. */
    public static <T> BackgroundResult<T> start(String threadName, Work<T> work) {
        BackgroundResult<T> r = new BackgroundResult<>();
        Thread thread = new Thread(() -> {
            try {
                r.result.complete(work.run());
            } catch (IOException e) {
                r.result.completeExceptionally(new UncheckedIOException(e));
            } catch (RuntimeException | Error e) {
                r.result.completeExceptionally(e);
            }
        }, threadName);
        thread.setDaemon(true);  // a process that exits does not wait for work it no longer needs
        thread.start();
        return r;
    }

    /** The result, once there; the work's failure, as it was thrown. */
    public T get() throws IOException {
        try {
            return result.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UncheckedIOException io) {
                throw io.getCause();
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** Hands the result to {@code release} when it comes (now, if it is there): the caller will not use it. */
    public void discard(Consumer<? super T> release) {
        result.thenAccept(release);
    }
}
