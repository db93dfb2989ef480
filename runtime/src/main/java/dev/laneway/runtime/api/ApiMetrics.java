package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.time.Duration;
import java.util.Locale;

/**
 * The serving metrics under {@code /q/metrics} (Prometheus), beside the HTTP requests by endpoint and status that
 * Quarkus counts itself ({@code http_server_requests_seconds}).
 */
@ApplicationScoped
@Startup // registered at start, so that every metric is there before the first request
public class ApiMetrics {

    @Inject
    MeterRegistry registry;

    @Inject
    Admission admission;

    @Inject
    ModelService models;

    private Counter promptTokens;
    private Counter cachedTokens;
    private Counter generatedTokens;
    private Timer firstToken;
    private Timer interToken;

    @PostConstruct
    void register() {
        promptTokens = Counter.builder("laneway.prompt.tokens").description("Prompt tokens processed")
                .register(registry);
        cachedTokens = Counter.builder("laneway.prompt.cached.tokens")
                .description("Prompt tokens served from a stream's KV cache (prompt cache hits)").register(registry);
        generatedTokens = Counter.builder("laneway.generated.tokens").description("Tokens generated")
                .register(registry);
        firstToken = Timer.builder("laneway.time.to.first.token")
                .description("Time from a generation's start on its stream to its first token (the prompt's work)")
                .publishPercentileHistogram().register(registry);
        interToken = Timer.builder("laneway.inter.token.latency")
                .description("Mean time between a generation's tokens after the first")
                .publishPercentileHistogram().register(registry);
        FunctionCounter.builder("laneway.engine.steps", this, m -> m.steps().steps())
                .description("Forward steps run, each one forward over the rows of one or more sequences")
                .register(registry);
        FunctionCounter.builder("laneway.engine.step.sequences", this, m -> m.steps().sequences())
                .description("Sequences in those steps, summed over them: per step, how many ran together")
                .register(registry);
        FunctionCounter.builder("laneway.engine.step.tokens", this, m -> m.steps().tokens())
                .description("Rows those steps computed (prompt and generated tokens), summed over them")
                .register(registry);
        Gauge.builder("laneway.queue.depth", admission::queued)
                .description("Requests waiting for a free stream").register(registry);
        Gauge.builder("laneway.streams.busy", admission::running)
                .description("Generations running now").register(registry);
    }

    private StepCounts steps() {
        return models.model().map(ServedModel::steps).orElse(StepCounts.NONE);
    }

    /** Counts one finished generation: its tokens, its latencies, and its whole time by how it ended. */
    void generation(GenerationResult result) {
        promptTokens.increment(result.promptTokens());
        cachedTokens.increment(result.cachedTokens());
        generatedTokens.increment(result.generatedTokens());
        if (result.generatedTokens() > 0) {
            firstToken.record(Duration.ofNanos(result.promptNanos()));
        }
        if (result.generatedTokens() > 1) {
            interToken.record(Duration.ofNanos(result.generationNanos() / (result.generatedTokens() - 1)));
        }
        Timer.builder("laneway.generation").description("Time per generation, prompt included")
                .tag("finish", result.finish().name().toLowerCase(Locale.ROOT))
                .register(registry)
                .record(Duration.ofNanos(result.promptNanos() + result.generationNanos()));
    }
}
