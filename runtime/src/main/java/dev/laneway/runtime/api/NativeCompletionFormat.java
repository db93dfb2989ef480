package dev.laneway.runtime.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * llama-server's {@code /completion}: one object per prompt ({@code content}, {@code tokens}, {@code stop_type},
 * {@code timings}, {@code generation_settings}, {@code completion_probabilities}), a list of them for several
 * prompts; streamed as partial objects with {@code "stop": false}, the last one whole, and no {@code [DONE]}.
 */
final class NativeCompletionFormat implements ReplyFormat {
    private static final int[] NO_TOKENS = new int[0];
    private static final ObjectMapper FIELDS = new ObjectMapper();

    private final String model;
    private final int context;
    private final GenerationParams params;
    private final List<String> prompts;
    private final boolean returnTokens;
    private final List<String> responseFields;
    private final int[] endOfGeneration;

    /**
     * @param context      each generation's context length: an answer that fills it was {@code truncated}
     * @param prompts      each choice's prompt text, by choice index
     * @param returnTokens whether a whole answer lists its token ids (a streamed one always does, chunk by chunk)
     * @param responseFields the paths of the fields a whole answer keeps ({@code response_fields}); empty: all
     * @param endOfGeneration the model's end tokens, listed as biases of negative infinity under {@code ignore_eos}
     */
    NativeCompletionFormat(String model, int context, GenerationParams params, List<String> prompts,
                           boolean returnTokens, List<String> responseFields, int[] endOfGeneration) {
        this.endOfGeneration = endOfGeneration.clone();
        this.model = model;
        this.context = context;
        this.params = params;
        this.prompts = List.copyOf(prompts);
        this.returnTokens = returnTokens;
        this.responseFields = List.copyOf(responseFields);
    }

    @Override
    public boolean endsWithDone() {
        return false;
    }

    @Override
    public Optional<Object> opening(int index) {
        return Optional.empty();
    }

    @Override
    public Object progress(int index) {
        return new Partial(index, "", NO_TOKENS, false, null);
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        return new Partial(index, text, tokens, false, probabilities(logprobs));
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        return kept(result(outcome, "", NO_TOKENS, null));
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        throw new IllegalStateException("llama-server's completions carry no usage chunk");
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        List<Object> results = new ArrayList<>();
        for (ChoiceOutcome o : outcomes) {
            results.add(kept(result(o, o.text(), returnTokens ? o.ending().tokens() : NO_TOKENS,
                    params.wantsLogprobs() ? probabilities(o.logprobs()) : null)));
        }
        return results.size() == 1 ? results.get(0) : results;
    }

    private Result result(ChoiceOutcome o, String content, int[] tokens, List<Probability> probabilities) {
        int evaluated = o.result().promptTokens();
        return new Result(o.index(), content, tokens, true, model, o.result().generatedTokens(), evaluated,
                GenerationSettings.of(params, endOfGeneration), prompts.get(o.index()), o.text().contains("\n"),
                o.ending().type().equals("limit") && evaluated + o.result().generatedTokens() >= context,
                o.ending().type(), o.ending().word(), evaluated + o.result().generatedTokens(),
                Timings.of(List.of(o)), probabilities);
    }

    /** The answer, or only the fields {@code response_fields} names, each under its path (missing ones left out). */
    private Object kept(Result result) {
        if (responseFields.isEmpty()) {
            return result;
        }
        JsonNode whole = FIELDS.valueToTree(result);
        ObjectNode kept = FIELDS.createObjectNode();
        for (String path : responseFields) {
            JsonNode value = whole;
            for (String key : path.split("/", -1)) {
                value = value == null ? null : value.get(key);
            }
            if (value != null) {
                kept.set(path, value);
            }
        }
        return kept;
    }

    /**
     * The tokens' probabilities as llama-server writes them: {@code logprob} and {@code top_logprobs}, or with
     * {@code post_sampling_probs} {@code prob} and {@code top_probs} of the distribution each token was drawn from.
     */
    private List<Probability> probabilities(List<TokenLogprob> logprobs) {
        if (logprobs.isEmpty()) {
            return null;
        }
        return logprobs.stream().map(e -> probability(e.id(), e.token(), e.logprob(), e.top().stream()
                .map(c -> probability(c.id(), c.token(), c.logprob(), null)).toList())).toList();
    }

    private Probability probability(int id, String token, float logprob, List<Probability> top) {
        int[] bytes = TokenLogprob.utf8(token);
        return params.postSampling() ? new Probability(id, token, null, (float) Math.exp(logprob), bytes, null, top)
                : new Probability(id, token, logprob, null, bytes, top, null);
    }

    /** A streamed piece. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Partial(int index, String content, int[] tokens, boolean stop,
                   @JsonInclude(JsonInclude.Include.NON_NULL) List<Probability> completionProbabilities) {
    }

    /** A whole answer, or the last streamed piece (then with empty content and tokens). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Result(int index, String content, int[] tokens, boolean stop, String model, int tokensPredicted,
                  int tokensEvaluated, GenerationSettings generationSettings, String prompt, boolean hasNewLine,
                  boolean truncated, String stopType, String stoppingWord, int tokensCached, Timings timings,
                  @JsonInclude(JsonInclude.Include.NON_NULL) List<Probability> completionProbabilities) {
    }

    /** A token's log-probability and its alternatives. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Probability(int id, String token, Float logprob, Float prob, int[] bytes, List<Probability> topLogprobs,
                       List<Probability> topProbs) {
    }

    /**
     * The sampling that produced the answer, under llama-server's names: the settings this server has, and its
     * samplers that this server does not implement at their "off" values (a request that turns one on is refused).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record GenerationSettings(int nPredict, long seed, double temperature, double dynatempRange,
                              double dynatempExponent, int topK, double topP, double minP, double topNSigma,
                              double xtcProbability, double xtcThreshold, double typicalP, int repeatLastN,
                              double repeatPenalty, double presencePenalty, double frequencyPenalty, int mirostat,
                              double adaptiveTarget, double adaptiveDecay, List<String> stop, int nProbs,
                              boolean ignoreEos, boolean stream, List<Bias> logitBias, List<String> samplers) {
        static GenerationSettings of(GenerationParams p, int[] endOfGeneration) {
            java.util.TreeMap<Integer, Float> biases = new java.util.TreeMap<>(p.logitBias());
            if (p.ignoreEos()) {
                // As llama-server lists it: ignore_eos is a bias of negative infinity on each end token.
                for (int end : endOfGeneration) {
                    biases.put(end, Float.NEGATIVE_INFINITY);
                }
            }
            return new GenerationSettings(p.maxTokens().orElse(-1), p.seed().orElse(0xffffffffL), p.temperature(),
                    0, 1, p.topK(), p.topP(), p.minP(), -1, 0, 0.1, 1, GenerationParams.REPEAT_WINDOW,
                    p.repetitionPenalty(), p.presencePenalty(), p.frequencyPenalty(), 0, -1, 0.9, p.stops(),
                    Math.max(0, p.topLogprobs()), p.ignoreEos(), p.stream(),
                    biases.entrySet().stream().map(e -> new Bias(Float.isInfinite(e.getValue()) && e.getValue() < 0
                            ? null : e.getValue(), e.getKey())).toList(),
                    List.of("penalties", "top_k", "top_p", "min_p", "temperature"));
        }
    }

    /** A logit bias, by token id (the request's text keys already tokenized); null: negative infinity. */
    record Bias(Float bias, int token) {
    }
}
