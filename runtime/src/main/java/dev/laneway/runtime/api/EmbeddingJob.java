package dev.laneway.runtime.api;

import dev.laneway.spi.Pooling;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One embeddings request on the served model: its inputs computed on free streams, as a generation's choices are;
 * its future completes with their pooled vectors in order, or with the model's refusal.
 */
final class EmbeddingJob implements Admission.Job {
    private final ServedModel model;
    private final List<int[]> prompts;
    private final Pooling pooling;
    private final AtomicBoolean cancelled = new AtomicBoolean();
    final CompletableFuture<List<float[]>> done = new CompletableFuture<>();

    EmbeddingJob(ServedModel model, List<int[]> prompts, Pooling pooling) {
        this.model = model;
        this.prompts = List.copyOf(prompts);
        this.pooling = pooling;
    }

    @Override
    public void start(Runnable onEnd) {
        TokenSink consumer = new TokenSink() {
            @Override
            public boolean accept(dev.laneway.spi.GeneratedToken token) {
                return false;
            }

            @Override
            public boolean cancelled() {
                return cancelled.get();
            }
        };
        CompletableFuture<List<float[]>> embedded;
        try {
            embedded = model.embed(prompts, pooling, consumer);
        } catch (RuntimeException e) {
            embedded = CompletableFuture.failedFuture(e);
        }
        embedded.whenComplete((vectors, error) -> {
            try {
                if (error != null) {
                    done.completeExceptionally(error);
                } else {
                    done.complete(vectors);
                }
            } finally {
                onEnd.run();
            }
        });
    }

    @Override
    public void cancel() {
        cancelled.set(true);
    }

    @Override
    public void end(ApiException why) {
        cancelled.set(true);
        done.completeExceptionally(why);
    }
}
