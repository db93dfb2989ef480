package dev.laneway.runtime.api;

import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One embeddings or rerank request on the served model: its inputs computed on free streams, as a generation's
 * choices are; its future completes with their pooled vectors in order, or with the model's refusal.
 */
final class EmbeddingJob implements Admission.Job {
    private static final Logger LOG = Logger.getLogger(EmbeddingJob.class);
    /** How long a request waits for its vectors before it is given up. */
    private static final long WAIT_MINUTES = 10;

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

    /**
     * The prompts' pooled vectors, computed as admission allows; a refusal is the client's error on {@code param},
     * a device fault one for {@code what}.
     */
    static List<float[]> run(Admission admission, ServedModel model, List<int[]> prompts, Pooling pooling,
                             String param, String what) {
        EmbeddingJob job = new EmbeddingJob(model, prompts, pooling);
        admission.submit(job);
        try {
            return job.done.get(WAIT_MINUTES, TimeUnit.MINUTES);
        } catch (TimeoutException e) {
            job.cancel();
            throw ApiException.overloaded(what + " took longer than " + WAIT_MINUTES + " minutes");
        } catch (InterruptedException e) {
            job.cancel();
            Thread.currentThread().interrupt();
            throw ApiException.shuttingDown("the server is stopping");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ApiException ended) {
                throw ended;
            }
            if (cause instanceof InvalidRequestException refused) {
                throw ApiException.invalidValue(refused.param() == null ? param : refused.param(),
                        refused.getMessage());
            }
            if (cause instanceof UnsupportedOperationException unsupported) {
                throw ApiException.http(501, "not_supported", unsupported.getMessage());
            }
            if (cause instanceof DeviceFaultException fault) {
                LOG.warnf("%s failed on device %s: %s", what, fault.device(), fault.getMessage());
                throw ApiException.deviceFault(fault, what);
            }
            LOG.error(what + " failed", cause);
            throw ApiException.internal();
        }
    }

    @Override
    public ServedModel model() {
        return model;
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
