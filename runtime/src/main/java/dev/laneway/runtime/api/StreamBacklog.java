package dev.laneway.runtime.api;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;

import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stream's frames on their way to its client, and a bound on those the client has not taken yet. The HTTP layer
 * takes the next frame only once the last one has reached the connection's socket, so frames wait here while a client
 * does not read. A client that lets more than {@code maxBytes} wait, or takes nothing for {@code stallNanos} while
 * frames wait, is given up: {@code onStall} runs once (it stops the generation and closes the connection), and the
 * frames it never took are dropped.
 */
final class StreamBacklog implements Flow.Subscriber<byte[]> {
    private final UnicastProcessor<byte[]> queue = UnicastProcessor.create();
    private final long maxBytes;
    private final long stallNanos;
    private final Runnable onStall;
    private final AtomicLong waitingBytes = new AtomicLong();
    private final AtomicLong waitingFrames = new AtomicLong();
    private volatile long lastTaken = System.nanoTime();
    private final AtomicBoolean stalled = new AtomicBoolean();

    StreamBacklog(long maxBytes, long stallNanos, Runnable onStall) {
        this.maxBytes = maxBytes;
        this.stallNanos = stallNanos;
        this.onStall = onStall;
    }

    /** The frames, for the HTTP layer. */
    Multi<byte[]> frames() {
        return queue.onItem().invoke(frame -> {
            waitingBytes.addAndGet(-frame.length);
            waitingFrames.decrementAndGet();
            lastTaken = System.nanoTime();
        });
    }

    /** Whether the client was given up. */
    boolean stalled() {
        return stalled.get();
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        queue.onSubscribe(subscription);
    }

    @Override
    public void onNext(byte[] frame) {
        if (stalled.get()) {
            return;
        }
        boolean waiting = waitingFrames.get() > 0;
        if (waiting && System.nanoTime() - lastTaken > stallNanos
                || waitingBytes.get() + frame.length > maxBytes) {
            if (stalled.compareAndSet(false, true)) {
                onStall.run();
            }
            return;
        }
        waitingBytes.addAndGet(frame.length);
        waitingFrames.incrementAndGet();
        queue.onNext(frame);
    }

    @Override
    public void onError(Throwable failure) {
        queue.onError(failure);
    }

    @Override
    public void onComplete() {
        queue.onComplete();
    }
}
