package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.KvUse;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.DoubleAdder;

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
    private Counter draftedTokens;
    private Counter acceptedDrafts;
    private Counter clientsGivenUp;
    private Timer firstToken;
    private Timer interToken;
    /** For llama-server's {@code /metrics}: prompt tokens computed, and the seconds of prompts and of generation. */
    private final DoubleAdder computedTokens = new DoubleAdder();
    private final DoubleAdder promptSeconds = new DoubleAdder();
    private final DoubleAdder generationSeconds = new DoubleAdder();
    private final AtomicInteger longest = new AtomicInteger();
    /** The same since llama-server's {@code /metrics} was last read, for its rates. */
    private final DoubleAdder recentComputed = new DoubleAdder();
    private final DoubleAdder recentPromptSeconds = new DoubleAdder();
    private final DoubleAdder recentGenerated = new DoubleAdder();
    private final DoubleAdder recentGenerationSeconds = new DoubleAdder();

    @PostConstruct
    void register() {
        promptTokens = Counter.builder("laneway.prompt.tokens").description("Prompt tokens processed")
                .register(registry);
        cachedTokens = Counter.builder("laneway.prompt.cached.tokens")
                .description("Prompt tokens served from a stream's KV cache (prompt cache hits)").register(registry);
        generatedTokens = Counter.builder("laneway.generated.tokens").description("Tokens generated")
                .register(registry);
        draftedTokens = Counter.builder("laneway.drafted.tokens")
                .description("Tokens drafted by prompt lookup and verified (--opt lookup)").register(registry);
        acceptedDrafts = Counter.builder("laneway.drafted.accepted.tokens")
                .description("Drafted tokens the generations took, each a forward step saved").register(registry);
        clientsGivenUp = Counter.builder("laneway.stream.clients.given.up")
                .description("Streams given up because their client stopped reading (laneway.client)")
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
        Gauge.builder("laneway.kv.cache.usage", this, m -> m.kvUse().fraction())
                .description("Fraction of the streams' KV cache positions that running generations hold")
                .register(registry);
        // the names a Kubernetes inference gateway's endpoint picker reads, as vLLM exports them
        Gauge.builder("vllm:num_requests_waiting", admission::queued)
                .description("Requests waiting for a free stream").register(registry);
        Gauge.builder("vllm:num_requests_running", admission::running)
                .description("Generations running now").register(registry);
        Gauge.builder("vllm:kv_cache_usage_perc", this, m -> m.kvUse().fraction())
                .description("KV cache usage, 0 to 1").register(registry);
    }

    /** Each model's metrics, with the model's id as their {@code model} label, once the models are known. */
    void registerModels(@Observes @Priority(jakarta.interceptor.Interceptor.Priority.APPLICATION + 1000)
                        StartupEvent event) {
        for (ManagedModel m : models.models()) {
            Tags tags = Tags.of("model", m.id());
            FunctionCounter.builder("laneway.model.loads", m, ManagedModel::loads).tags(tags)
                    .description("Times the model was loaded").register(registry);
            FunctionCounter.builder("laneway.model.unloads", m, ManagedModel::unloads).tags(tags)
                    .description("Times the model was unloaded: idle past its keep-alive, asked, or to make room")
                    .register(registry);
            Gauge.builder("laneway.model.loaded", m, x -> x.state() == ManagedModel.State.LOADED ? 1 : 0).tags(tags)
                    .description("Whether the model is loaded (1) or not (0)").register(registry);
            Gauge.builder("laneway.model.requests.running", admission, a -> a.running(m.id())).tags(tags)
                    .description("The model's generations running now").register(registry);
            Gauge.builder("laneway.model.requests.waiting", admission, a -> a.queued(m.id())).tags(tags)
                    .description("The model's requests waiting for a stream").register(registry);
        }
    }

    /** The loaded models' KV use now, summed; none while none is loaded. */
    KvUse kvUse() {
        KvUse sum = KvUse.NONE;
        for (ManagedModel m : models.models()) {
            sum = sum.plus(m.model().map(ServedModel::kvUse).orElse(KvUse.NONE));
        }
        return sum;
    }

    /**
     * The gauges an inference gateway's endpoint picker reads, under vLLM's names (Prometheus text): requests waiting
     * and running, the KV cache in use (0 to 1), the cache's shape as {@code vllm:cache_config_info} (its capacity
     * counted in blocks of {@link #BLOCK} positions, vLLM's default block; the cache here is one contiguous context
     * per stream, so the block is a unit of count) and the LoRA adapters as {@code vllm:lora_requests_info}: those
     * served (every one can run in a batch beside the others, so {@code max_lora} is their number), and those of
     * the requests generating and waiting, comma-separated, its value the time of reading as vLLM writes it.
     */
    String vllmText() {
        KvUse kv = kvUse();
        StringBuilder out = new StringBuilder();
        gauge(out, "vllm:num_requests_waiting", "Requests waiting for a free stream.", "", admission.queued());
        gauge(out, "vllm:num_requests_running", "Generations running now.", "", admission.running());
        gauge(out, "vllm:kv_cache_usage_perc", "KV cache usage, 0 to 1.", "", kv.fraction());
        gauge(out, "vllm:cache_config_info", "The KV cache's shape.", "{block_size=\"" + BLOCK
                + "\",num_gpu_blocks=\"" + kv.capacity() / BLOCK + "\"}", 1);
        Admission.AdapterUse adapters = admission.adapterUse();
        gauge(out, "vllm:lora_requests_info", "LoRA adapters served, running and waiting.",
                "{max_lora=\"" + models.adapters().all().size() + "\",running_lora_adapters=\""
                        + label(adapters.running()) + "\",waiting_lora_adapters=\"" + label(adapters.waiting()) + "\"}",
                System.currentTimeMillis() / 1000.0);
        return out.toString();
    }

    /** Names as one label value: comma-separated, with Prometheus' escapes. */
    private static String label(java.util.Set<String> names) {
        return String.join(",", names).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** vLLM's default KV block, in positions: the unit of {@code vllm:cache_config_info}'s capacity. */
    static final int BLOCK = 16;

    private static void gauge(StringBuilder out, String name, String help, String labels, double value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(labels).append(' ').append(value).append('\n');
    }

    /**
     * llama-server's metrics as its {@code /metrics} writes them ({@code llamacpp:} names, Prometheus text): prompt
     * tokens computed and served from the cache, tokens generated, their seconds and rates, the decode steps, the
     * requests running and waiting, the tokens drafted by prompt lookup and those accepted. The two rates are
     * llama-server's: over the generations that ended since the last read, 0 when none did.
     */
    synchronized String llamaServerText() {
        double computed = computedTokens.sum();
        double prompt = promptSeconds.sum();
        double generated = generatedTokens.count();
        double generation = generationSeconds.sum();
        double recentPrompt = recentPromptSeconds.sumThenReset();
        double recentComputedTokens = recentComputed.sumThenReset();
        double recentGeneration = recentGenerationSeconds.sumThenReset();
        double recentGeneratedTokens = recentGenerated.sumThenReset();
        StepCounts steps = steps();
        StringBuilder out = new StringBuilder();
        metric(out, "prompt_tokens_total", "counter", "Number of prompt tokens processed.", computed);
        metric(out, "prompt_tokens_cached_total", "counter", "Number of prompt tokens served from the cache.",
                cachedTokens.count());
        metric(out, "prompt_seconds_total", "counter", "Prompt process time", prompt);
        metric(out, "tokens_predicted_total", "counter", "Number of generation tokens processed.", generated);
        metric(out, "tokens_predicted_seconds_total", "counter", "Predict process time", generation);
        metric(out, "n_decode_total", "counter", "Total number of llama_decode() calls", steps.steps());
        metric(out, "n_tokens_max", "counter", "Largest observed n_tokens.", longest.get());
        metric(out, "spec_decode_num_draft_tokens_total", "counter", "Draft tokens proposed.",
                draftedTokens.count());
        metric(out, "spec_decode_num_accepted_tokens_total", "counter", "Draft tokens accepted.",
                acceptedDrafts.count());
        metric(out, "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
                recentPrompt > 0 ? recentComputedTokens / recentPrompt : 0);
        metric(out, "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
                recentGeneration > 0 ? recentGeneratedTokens / recentGeneration : 0);
        metric(out, "requests_processing", "gauge", "Number of requests processing.", admission.running());
        metric(out, "requests_deferred", "gauge", "Number of requests deferred.", admission.queued());
        metric(out, "n_busy_slots_per_decode", "gauge", "Average number of busy slots per llama_decode() call",
                steps.steps() > 0 ? (double) steps.sequences() / steps.steps() : 0);
        return out.toString();
    }

    private static void metric(StringBuilder out, String name, String type, String help, double value) {
        out.append("# HELP llamacpp:").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE llamacpp:").append(name).append(' ').append(type).append('\n');
        out.append("llamacpp:").append(name).append(' ').append(value).append('\n');
    }

    private StepCounts steps() {
        return models.steps();
    }

    void clientGivenUp() {
        clientsGivenUp.increment();
    }

    /** Counts one finished generation: its tokens, its latencies, and its whole time by how it ended. */
    void generation(GenerationResult result) {
        promptTokens.increment(result.promptTokens());
        computedTokens.add(result.computedPromptTokens());
        promptSeconds.add(result.promptNanos() / 1e9);
        generationSeconds.add(result.generationNanos() / 1e9);
        recentComputed.add(result.computedPromptTokens());
        recentPromptSeconds.add(result.promptNanos() / 1e9);
        recentGenerated.add(result.generatedTokens());
        recentGenerationSeconds.add(result.generationNanos() / 1e9);
        longest.accumulateAndGet(result.promptTokens() + result.generatedTokens(), Math::max);
        cachedTokens.increment(result.cachedTokens());
        generatedTokens.increment(result.generatedTokens());
        draftedTokens.increment(result.draftedTokens());
        acceptedDrafts.increment(result.acceptedDrafts());
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
