package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.spi.AdapterUse;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.OutputGrammar;
import dev.laneway.spi.Sampling;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The fields both generation endpoints share: how many tokens, how to sample, when to stop, what to report. Absent
 * sampling fields take llama-server's defaults.
 *
 * @param maxTokens    the most tokens per choice; empty: as many as the context leaves
 * @param temperature  0 is greedy
 * @param topK         0 keeps every token
 * @param seed         empty: a fresh seed per generation
 * @param stops        stop strings; the text ends before the first one found
 * @param n            choices per prompt
 * @param topLogprobs  {@link GenerationRequest#NO_LOGPROBS}, or the number of alternatives to report per token
 * @param includeUsage streamed: end with a chunk holding the usage
 * @param ignoreEos    keep generating past the end-of-text token
 * @param logitBias    token id to the bias added to its logit
 * @param grammar      what the output must be: from {@code grammar}, {@code json_schema} (llama-server's fields) or
 *                     {@code response_format}; empty: free text
 * @param cachePrompt  llama-server's {@code cache_prompt}: false computes the whole prompt afresh
 * @param timingsPerToken llama-server's {@code timings_per_token}: every streamed chunk carries the running timings
 * @param returnProgress  llama-server's {@code return_progress}: a stream reports the prompt's progress chunk by chunk
 * @param slot         llama-server's {@code id_slot}: the stream to run in, or -1 for the one the engine chooses
 * @param postSampling llama-server's {@code post_sampling_probs}: the probabilities reported are those the token was
 *                     drawn from, after the sampler's filters and temperature
 * @param nKeep        llama-server's {@code n_keep}: with {@code serve --context-shift}, the prompt tokens (after the
 *                     model's leading special tokens) a shift keeps; -1 the whole prompt
 * @param cacheSalt    vLLM's {@code cache_salt}: the prompt reuses only what prompts under the same salt left cached
 * @param lora         llama-server's {@code lora}: the scale of each adapter the request sets, by its number in the
 *                     model's list; empty: the server's scales
 * @param adapters     the LoRA adapters the generation applies (the model named, or the scales), once resolved
 */
record GenerationParams(OptionalInt maxTokens, double temperature, int topK, double topP, double minP,
                        double repetitionPenalty, OptionalLong seed, List<String> stops, int n, int topLogprobs,
                        boolean stream, boolean includeUsage, boolean ignoreEos, double presencePenalty,
                        double frequencyPenalty, Map<Integer, Float> logitBias, Optional<OutputGrammar> grammar,
                        boolean cachePrompt, boolean timingsPerToken, boolean returnProgress, int slot,
                        boolean postSampling, String cacheSalt, int nKeep, Map<Integer, Float> lora,
                        List<AdapterUse> adapters) {

    static final int REPEAT_WINDOW = 64;

    GenerationParams {
        stops = List.copyOf(stops);
        logitBias = Map.copyOf(logitBias);
        lora = Map.copyOf(lora);
        adapters = List.copyOf(adapters);
    }

    /** The sampling of choice {@code choice}: with a seed, each choice draws from its own (seed + choice). */
    Sampling sampling(int choice) {
        OptionalLong choiceSeed = seed.isPresent() ? OptionalLong.of(seed.getAsLong() + choice) : OptionalLong.empty();
        return new Sampling(temperature, topK, topP, minP, repetitionPenalty, REPEAT_WINDOW, choiceSeed,
                presencePenalty, frequencyPenalty, logitBias);
    }

    /** The same parameters with the output held to {@code grammar} (a tool choice's). */
    GenerationParams withGrammar(OutputGrammar grammar) {
        return new GenerationParams(maxTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stops, n,
                topLogprobs, stream, includeUsage, ignoreEos, presencePenalty, frequencyPenalty, logitBias,
                Optional.of(grammar), cachePrompt, timingsPerToken, returnProgress, slot, postSampling, cacheSalt,
                nKeep, lora, adapters);
    }

    /** The same parameters applying {@code adapters}. */
    GenerationParams withAdapters(List<AdapterUse> adapters) {
        return new GenerationParams(maxTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stops, n,
                topLogprobs, stream, includeUsage, ignoreEos, presencePenalty, frequencyPenalty, logitBias, grammar,
                cachePrompt, timingsPerToken, returnProgress, slot, postSampling, cacheSalt, nKeep, lora, adapters);
    }

    boolean wantsLogprobs() {
        return topLogprobs != GenerationRequest.NO_LOGPROBS;
    }

    /** Which endpoint's spelling of the fields a request uses. */
    enum Dialect {
        /** OpenAI's {@code /v1/completions}: {@code logprobs: k}. */
        COMPLETIONS,
        /** OpenAI's {@code /v1/chat/completions}: {@code logprobs: true} and {@code top_logprobs: k}. */
        CHAT,
        /** llama-server's {@code /completion}: {@code n_probs: k}. */
        NATIVE
    }

    /** Reads and checks the shared fields, the server's defaults for those left out. */
    static GenerationParams read(JsonRequest r, Dialect dialect, RequestDefaults defaults) {
        boolean chat = dialect == Dialect.CHAT;
        rejectUnsupported(r, dialect);
        OptionalInt maxTokens = maxTokens(r, chat);
        if (maxTokens.isEmpty() && r.raw("n_predict") == null) {
            maxTokens = defaults.nPredict();
        }
        double temperature = r.number("temperature").orElse(defaults.temperature());
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw ApiException.invalidValue("temperature", "temperature must be a number of at least 0, was "
                    + temperature);
        }
        double topP = r.number("top_p").orElse(defaults.topP());
        if (!(topP > 0 && topP <= 1)) {
            throw ApiException.invalidValue("top_p", "top_p must be in (0, 1], was " + topP);
        }
        // llama-server and vLLM spell "no top-k" as 0 or a negative number.
        int topK = Math.max(0, r.integer("top_k").orElse(defaults.topK()));
        double minP = r.number("min_p").orElse(defaults.minP());
        if (!(minP >= 0 && minP <= 1)) {
            throw ApiException.invalidValue("min_p", "min_p must be in [0, 1], was " + minP);
        }
        double penalty = r.number("repetition_penalty").orElse(r.number("repeat_penalty")
                .orElse(defaults.repeatPenalty()));
        if (!(penalty > 0) || Double.isInfinite(penalty)) {
            throw ApiException.invalidValue("repetition_penalty", "repetition_penalty must be above 0, was " + penalty);
        }
        int n = choices(r);
        if (n < 1 || n > RequestBounds.N) {
            String field = r.raw("n_cmpl") != null ? "n_cmpl" : "n";
            throw ApiException.invalidValue(field, field + " must be between 1 and " + RequestBounds.N + ", was " + n);
        }
        boolean stream = r.bool("stream").orElse(false);
        return new GenerationParams(maxTokens, temperature, topK, topP, minP, penalty, seed(r, defaults), stops(r), n,
                switch (dialect) {
                    case CHAT -> chatLogprobs(r);
                    case COMPLETIONS -> completionLogprobs(r);
                    case NATIVE -> nativeLogprobs(r);
                }, stream, includeUsage(r),
                r.bool("ignore_eos").orElse(false), openAiPenalty(r, "presence_penalty"),
                openAiPenalty(r, "frequency_penalty"), logitBias(r, dialect), grammar(r),
                r.bool("cache_prompt").orElse(true), r.bool("timings_per_token").orElse(false),
                r.bool("return_progress").orElse(false), slot(r), r.bool("post_sampling_probs").orElse(false),
                cacheSalt(r), nKeep(r), lora(r), List.of());
    }

    /** llama-server's {@code lora}: {@code [{"id": 0, "scale": 0.5}, ...]}, each adapter once. */
    private static Map<Integer, Float> lora(JsonRequest r) {
        JsonNode lora = r.raw("lora");
        Map<Integer, Float> scales = new java.util.LinkedHashMap<>();
        if (lora == null || lora.isNull()) {
            return scales;
        }
        if (!lora.isArray()) {
            throw ApiException.invalidValue("lora", "lora must be an array of {\"id\", \"scale\"} objects");
        }
        for (JsonNode entry : lora) {
            JsonNode id = entry.path("id");
            JsonNode scale = entry.path("scale");
            if (!entry.isObject() || !id.canConvertToInt() || !id.isIntegralNumber() || id.asInt() < 0
                    || !scale.isNumber() || !Double.isFinite(scale.asDouble()) || entry.size() != 2) {
                throw ApiException.invalidValue("lora", "each lora entry is {\"id\": adapter number, \"scale\": "
                        + "number}, was " + entry);
            }
            if (scales.put(id.asInt(), (float) scale.asDouble()) != null) {
                throw ApiException.invalidValue("lora", "lora names adapter " + id.asInt() + " twice");
            }
        }
        return scales;
    }

    /**
     * The grammar of the output, from whichever of {@code response_format} (OpenAI's {@code json_object} and
     * {@code json_schema}, or llama-server's {@code json_object} with a {@code schema}), {@code json_schema} (a
     * schema) and {@code grammar} (GBNF) the request has; more than one is refused.
     */
    private static Optional<OutputGrammar> grammar(JsonRequest r) {
        List<String> given = new ArrayList<>();
        Optional<OutputGrammar> grammar = Optional.empty();
        JsonNode format = r.raw("response_format");
        if (format != null && !format.isNull()) {
            if (!format.isObject()) {
                throw ApiException.invalidType("response_format", "response_format must be an object");
            }
            String type = format.path("type").asText("");
            switch (type) {
                case "text" -> { }
                case "json_object" -> {
                    JsonNode schema = format.get("schema");
                    grammar = Optional.of(schema == null || schema.isNull()
                            ? OutputGrammar.jsonObject("response_format")
                            : OutputGrammar.jsonSchema(bounded(schema.toString(), "response_format.schema"),
                                    "response_format.schema"));
                    given.add("response_format");
                }
                case "json_schema" -> {
                    JsonNode wrapper = format.get("json_schema");
                    if (wrapper == null || !wrapper.isObject()) {
                        throw ApiException.invalidValue("response_format.json_schema", "response_format of type"
                                + " json_schema needs a json_schema object holding the schema");
                    }
                    JsonNode schema = wrapper.get("schema");
                    grammar = Optional.of(schema == null || schema.isNull()
                            ? OutputGrammar.jsonObject("response_format")
                            : OutputGrammar.jsonSchema(bounded(schema.toString(),
                                    "response_format.json_schema.schema"), "response_format.json_schema.schema"));
                    given.add("response_format");
                }
                default -> throw ApiException.invalidValue("response_format.type", "response_format.type must be"
                        + " text, json_object or json_schema, was " + (type.isEmpty() ? "missing" : type));
            }
        }
        JsonNode schema = r.raw("json_schema");
        if (schema != null && !schema.isNull()) {
            grammar = Optional.of(OutputGrammar.jsonSchema(bounded(schema.toString(), "json_schema"), "json_schema"));
            given.add("json_schema");
        }
        JsonNode gbnf = r.raw("grammar");
        if (gbnf != null && !gbnf.isNull()) {
            if (!gbnf.isTextual()) {
                throw ApiException.invalidType("grammar", "grammar must be a string of GBNF");
            }
            if (!gbnf.textValue().isBlank()) {
                grammar = Optional.of(OutputGrammar.gbnf(bounded(gbnf.textValue(), "grammar"), "grammar"));
                given.add("grammar");
            }
        }
        if (given.size() > 1) {
            throw ApiException.invalidValue(given.get(1), "give one of response_format, json_schema and grammar, not "
                    + String.join(" and ", given));
        }
        return grammar;
    }

    /** A grammar or schema's text, refused naming {@code param} when longer than the bound. */
    private static String bounded(String text, String param) {
        if (text.length() > RequestBounds.GRAMMAR_CHARS) {
            throw ApiException.invalidValue(param, param + " holds " + text.length() + " characters; at most "
                    + RequestBounds.GRAMMAR_CHARS + " are allowed");
        }
        return text;
    }

    /** OpenAI's presence and frequency penalties: -2 to 2, 0 (off) when absent. */
    private static double openAiPenalty(JsonRequest r, String field) {
        double value = r.number(field).orElse(0);
        if (!(Math.abs(value) <= 2)) {
            throw ApiException.invalidValue(field, field + " must be between -2 and 2, was " + value);
        }
        return value;
    }

    /**
     * {@code {"token id": bias}}, each bias -100 to 100; the ids are checked against the vocabulary later. llama-server's
     * {@code /completion} also takes {@code [[id, bias], ...]} and {@code false} for a bias (read as -100, a ban); its
     * text keys are {@link #logitBiasTexts}.
     */
    private static Map<Integer, Float> logitBias(JsonRequest r, Dialect dialect) {
        Map<Integer, Float> bias = new HashMap<>();
        for (Map.Entry<String, JsonNode> e : biasEntries(r, dialect)) {
            Integer id = tokenId(e.getKey());
            if (id != null) {
                bias.put(id, biasValue(e.getKey(), e.getValue()));
            } else if (dialect != Dialect.NATIVE) {
                throw ApiException.invalidValue("logit_bias", "logit_bias keys are token ids, was \""
                        + e.getKey() + "\"");
            }
        }
        return bias;
    }

    /** llama-server's {@code logit_bias} entries keyed by text: each token of the text gets the bias. */
    static Map<String, Float> logitBiasTexts(JsonRequest r) {
        Map<String, Float> texts = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : biasEntries(r, Dialect.NATIVE)) {
            if (tokenId(e.getKey()) == null) {
                texts.put(e.getKey(), biasValue(e.getKey(), e.getValue()));
            }
        }
        return texts;
    }

    private static List<Map.Entry<String, JsonNode>> biasEntries(JsonRequest r, Dialect dialect) {
        JsonNode node = r.raw("logit_bias");
        List<Map.Entry<String, JsonNode>> entries = new ArrayList<>();
        if (node == null || node.isNull()) {
            return entries;
        }
        RequestBounds.atMost("logit_bias", node.size(), RequestBounds.LOGIT_BIASES, "entries");
        if (node.isArray() && dialect == Dialect.NATIVE) {
            for (JsonNode pair : node) {
                if (!pair.isArray() || pair.size() != 2 || !(pair.get(0).isTextual() || pair.get(0).isIntegralNumber())) {
                    throw ApiException.invalidType("logit_bias", "logit_bias pairs are [token id or text, bias]");
                }
                entries.add(Map.entry(pair.get(0).asText(), pair.get(1)));
            }
            return entries;
        }
        if (!node.isObject()) {
            throw ApiException.invalidType("logit_bias", "logit_bias must be an object of token ids to numbers");
        }
        node.fields().forEachRemaining(entries::add);
        return entries;
    }

    private static Integer tokenId(String key) {
        try {
            int id = Integer.parseInt(key);
            if (id < 0) {
                throw ApiException.invalidValue("logit_bias", "logit_bias keys are token ids, was " + id);
            }
            return id;
        } catch (NumberFormatException notAnId) {
            return null;
        }
    }

    private static float biasValue(String key, JsonNode value) {
        if (value.isBoolean() && !value.booleanValue()) {
            return -100f;
        }
        if (!value.isNumber() || !(Math.abs(value.doubleValue()) <= 100)) {
            throw ApiException.invalidValue("logit_bias", "the bias of " + key
                    + " must be a number between -100 and 100 (or false), was " + value);
        }
        return value.floatValue();
    }

    /** The same parameters with more logit biases (llama-server's text keys, tokenized). */
    GenerationParams withLogitBias(Map<Integer, Float> more) {
        Map<Integer, Float> bias = new HashMap<>(logitBias);
        bias.putAll(more);
        return new GenerationParams(maxTokens, temperature, topK, topP, minP, repetitionPenalty, seed, stops, n,
                topLogprobs, stream, includeUsage, ignoreEos, presencePenalty, frequencyPenalty, bias, grammar,
                cachePrompt, timingsPerToken, returnProgress, slot, postSampling, cacheSalt, nKeep, lora, adapters);
    }

    private static OptionalInt maxTokens(JsonRequest r, boolean chat) {
        // llama-server's n_predict comes first, and -1 is "as many as the context leaves".
        OptionalInt predict = r.integer("n_predict");
        if (predict.isPresent()) {
            int n = predict.getAsInt();
            if (n != -1 && n < 1) {
                throw ApiException.invalidValue("n_predict", "n_predict must be -1 or at least 1, was " + n);
            }
            return n == -1 ? OptionalInt.empty() : predict;
        }
        String field = "max_completion_tokens";
        OptionalInt value = r.integer(field);
        if (value.isEmpty()) {
            field = "max_tokens";
            value = r.integer(field);
        }
        if (value.isPresent() && value.getAsInt() < 1) {
            throw ApiException.invalidValue(field, field + " must be at least 1, was " + value.getAsInt());
        }
        return value;
    }

    /** llama-server's convention: -1 (or no seed) draws a fresh seed. */
    private static OptionalLong seed(JsonRequest r, RequestDefaults defaults) {
        JsonNode node = r.raw("seed");
        if (node == null || node.isNull()) {
            return defaults.seed();
        }
        long seed = JsonRequest.longInteger(node, "seed");
        return seed == -1 ? OptionalLong.empty() : OptionalLong.of(seed);
    }

    private static List<String> stops(JsonRequest r) {
        JsonNode node = r.raw("stop");
        List<String> stops = new ArrayList<>();
        if (node == null) {
            return stops;
        }
        if (node.isTextual()) {
            stops.add(node.textValue());
        } else if (node.isArray()) {
            for (JsonNode item : node) {
                if (!item.isTextual()) {
                    throw ApiException.invalidType("stop", "stop must be a string or a list of strings");
                }
                stops.add(item.textValue());
            }
        } else {
            throw ApiException.invalidType("stop", "stop must be a string or a list of strings");
        }
        RequestBounds.atMost("stop", stops.size(), RequestBounds.STOPS, "strings");
        for (String stop : stops) {
            if (stop.length() > RequestBounds.STOP_CHARS) {
                throw ApiException.invalidValue("stop", "a stop string holds " + stop.length()
                        + " characters; at most " + RequestBounds.STOP_CHARS + " are allowed");
            }
        }
        stops.removeIf(String::isEmpty);
        return stops;
    }

    /** Completions: {@code logprobs: k} reports the chosen token and the k most likely ones. */
    private static int completionLogprobs(JsonRequest r) {
        OptionalInt k = r.integer("logprobs");
        if (k.isEmpty()) {
            return GenerationRequest.NO_LOGPROBS;
        }
        return checkTopLogprobs("logprobs", k.getAsInt());
    }

    /** llama-server: {@code n_probs: k} reports the chosen token and the k most likely ones; 0 reports none. */
    private static int nativeLogprobs(JsonRequest r) {
        int k = r.integer("n_probs").orElse(0);
        return k == 0 ? GenerationRequest.NO_LOGPROBS : checkTopLogprobs("n_probs", k);
    }

    /** Chat: {@code logprobs: true} reports the chosen token, {@code top_logprobs: k} the k most likely ones too. */
    private static int chatLogprobs(JsonRequest r) {
        boolean logprobs = r.bool("logprobs").orElse(false);
        OptionalInt k = r.integer("top_logprobs");
        if (k.isPresent() && !logprobs) {
            throw ApiException.invalidValue("top_logprobs", "top_logprobs needs logprobs: true");
        }
        return logprobs ? checkTopLogprobs("top_logprobs", k.orElse(0)) : GenerationRequest.NO_LOGPROBS;
    }

    private static int checkTopLogprobs(String param, int k) {
        if (k < 0 || k > RequestBounds.TOP_LOGPROBS) {
            throw ApiException.invalidValue(param, param + " must be between 0 and " + RequestBounds.TOP_LOGPROBS
                    + ", was " + k);
        }
        return k;
    }

    private static boolean includeUsage(JsonRequest r) {
        JsonNode options = r.raw("stream_options");
        if (options == null) {
            return false;
        }
        if (!options.isObject()) {
            throw ApiException.invalidType("stream_options", "stream_options must be an object");
        }
        JsonNode include = options.get("include_usage");
        if (include == null || include.isNull()) {
            return false;
        }
        if (!include.isBoolean()) {
            throw ApiException.invalidType("stream_options.include_usage", "include_usage must be true or false");
        }
        return include.booleanValue();
    }

    /** Fields whose meaning this server does not implement are refused by name rather than ignored. */
    private static void rejectUnsupported(JsonRequest r, Dialect dialect) {
        boolean chat = dialect == Dialect.CHAT;
        if (r.bool("echo").orElse(false)) {
            throw ApiException.invalidValue("echo", "echo is not supported");
        }
        JsonNode suffix = r.raw("suffix");
        if (suffix != null && !(suffix.isTextual() && suffix.textValue().isEmpty())) {
            throw ApiException.invalidValue("suffix", "suffix is not supported");
        }
        JsonNode tools = r.raw("tools");
        if (!chat && tools != null && !tools.isEmpty()) {
            throw ApiException.invalidValue("tools", "tools are for /v1/chat/completions");
        }
        for (String legacy : List.of("functions", "function_call")) {
            if (r.raw(legacy) != null) {
                throw ApiException.invalidValue(legacy, legacy + " is not supported: give tools and tool_choice");
            }
        }
        if (chat) {
            rejectUnsupportedChat(r);
        }
        if (r.raw("samplers") != null) {
            throw ApiException.invalidValue("samplers", "samplers is not supported: this server samples in its own"
                    + " order (penalties, top_k, top_p, min_p, temperature)");
        }
        if (dialect != Dialect.NATIVE) {
            refuseUnlessDefault(r, "n_probs", 0, "use logprobs (completions) or top_logprobs (chat)");
            if (r.bool("post_sampling_probs").orElse(false)) {
                throw ApiException.invalidValue("post_sampling_probs", "post_sampling_probs is for llama-server's"
                        + " /completion; OpenAI's log-probabilities are the model's, before sampling");
            }
        }
        refuseUnlessDefault(r, "typical_p", 1, "typical sampling is not implemented");
        // llama-server's other samplers and controls, at the values that turn them off.
        refuseUnlessDefault(r, "dynatemp_range", 0, "dynamic temperature is not implemented");
        refuseUnlessDefault(r, "top_n_sigma", -1, "top-n-sigma sampling is not implemented");
        refuseUnlessDefault(r, "xtc_probability", 0, "XTC sampling is not implemented");
        refuseUnlessDefault(r, "dry_multiplier", 0, "DRY sampling is not implemented");
        refuseUnlessDefault(r, "min_keep", 0, "the filters keep at least one token");
        refuseUnlessDefault(r, "repeat_last_n", REPEAT_WINDOW, "the repetition penalty looks at the last "
                + REPEAT_WINDOW + " tokens");
        refuseUnlessDefault(r, "penalty_last_n", REPEAT_WINDOW, "the repetition penalty looks at the last "
                + REPEAT_WINDOW + " tokens");
        refuseUnlessDefault(r, "t_max_predict_ms", 0, "generation has no time limit; give n_predict");
        refuseUnlessDefault(r, "n_indent", 0, "indentation control is not implemented");
        JsonNode fields = r.raw("response_fields");
        if (dialect != Dialect.NATIVE && fields != null && !fields.isNull() && !(fields.isArray() && fields.isEmpty())) {
            throw ApiException.invalidValue("response_fields", "response_fields shapes llama-server's /completion"
                    + " answers only");
        }
        refuseUnlessDefault(r, "mirostat", 0, "mirostat sampling is not implemented");
        refuseUnlessDefault(r, "adaptive_target", -1, "adaptive-p sampling is not implemented");
        refuseUnlessDefault(r, "reasoning_budget", -1, "thinking is bounded by max_tokens only");
        JsonNode images = r.raw("image_data");
        if (images != null && !images.isNull() && !(images.isArray() && images.isEmpty())) {
            throw ApiException.invalidValue("image_data", "image_data is not supported: the served model reads text"
                    + " only");
        }
        if (!r.bool("parse_tool_calls").orElse(true)) {
            throw ApiException.invalidValue("parse_tool_calls", "parse_tool_calls false is not supported: tool calls"
                    + " are always read from the answer");
        }
        OptionalInt bestOf = r.integer("best_of");
        int n = choices(r);
        if (bestOf.isPresent() && bestOf.getAsInt() != n) {
            throw ApiException.invalidValue("best_of", "best_of other than n is not supported (best_of "
                    + bestOf.getAsInt() + ", n " + n + ")");
        }
    }

    /** llama-server's {@code id_slot}: a stream's number (checked against the model's streams), or -1. */
    private static int slot(JsonRequest r) {
        int slot = r.integer("id_slot").orElse(GenerationRequest.ANY_SLOT);
        if (slot < GenerationRequest.ANY_SLOT) {
            throw ApiException.invalidValue("id_slot", "id_slot must be -1 (any stream) or a stream's number, was "
                    + slot);
        }
        return slot;
    }

    /** llama-server's {@code n_keep}: 0 or more prompt tokens, or -1 for the whole prompt. */
    private static int nKeep(JsonRequest r) {
        int keep = r.integer("n_keep").orElse(0);
        if (keep < -1) {
            throw ApiException.invalidValue("n_keep", "n_keep must be -1 (the whole prompt) or more, was " + keep);
        }
        return keep;
    }

    /** vLLM's {@code cache_salt}: a non-empty string of bounded length when given. */
    private static String cacheSalt(JsonRequest r) {
        String salt = r.string("cache_salt").orElse(GenerationRequest.NO_SALT);
        if (r.raw("cache_salt") != null && salt.isEmpty()) {
            throw ApiException.invalidValue("cache_salt", "cache_salt must be a non-empty string when given");
        }
        if (salt.length() > RequestBounds.SALT_CHARS) {
            throw ApiException.invalidValue("cache_salt", "cache_salt must be at most " + RequestBounds.SALT_CHARS
                    + " characters, was " + salt.length());
        }
        return salt;
    }

    /** The choices asked for: llama-server's {@code n_cmpl}, which wins as there, else {@code n}. */
    private static int choices(JsonRequest r) {
        return r.integer("n_cmpl").orElseGet(() -> r.integer("n").orElse(1));
    }

    /**
     * OpenAI's chat fields this server does not implement, refused unless they ask for nothing: audio output,
     * predicted outputs, web search, a stored completion, a service tier other than the default, a verbosity other
     * than medium.
     */
    private static void rejectUnsupportedChat(JsonRequest r) {
        for (String field : List.of("audio", "prediction", "web_search_options")) {
            if (r.raw(field) != null) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        JsonNode modalities = r.raw("modalities");
        if (modalities != null && !(modalities.isArray() && modalities.size() == 1
                && "text".equals(modalities.get(0).asText()))) {
            throw ApiException.invalidValue("modalities", "modalities other than [\"text\"] are not supported");
        }
        if (r.bool("store").orElse(false)) {
            throw ApiException.invalidValue("store", "store true is not supported: this server keeps no completions");
        }
        r.string("service_tier").filter(t -> !t.equals("auto") && !t.equals("default")).ifPresent(t -> {
            throw ApiException.invalidValue("service_tier", "service_tier must be auto or default, was " + t);
        });
        r.string("verbosity").filter(v -> !v.equals("medium")).ifPresent(v -> {
            throw ApiException.invalidValue("verbosity", "verbosity other than medium is not supported, was " + v);
        });
        r.string("reasoning_effort").filter(e -> !List.of("none", "minimal", "low", "medium", "high").contains(e))
                .ifPresent(e -> {
                    throw ApiException.invalidValue("reasoning_effort", "reasoning_effort must be none, minimal,"
                            + " low, medium or high, was " + e);
                });
    }

    /** A field this server has no use for but its value that means "off". */
    private static void refuseUnlessDefault(JsonRequest r, String field, double off, String why) {
        double value = r.number(field).orElse(off);
        if (value != off) {
            throw ApiException.invalidValue(field, field + " " + r.raw(field) + " is not supported: " + why);
        }
    }
}
