package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ChatMessage;
import dev.laneway.runtime.serve.AdapterCatalog;
import dev.laneway.spi.AdapterUse;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RouterException;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.ServedModel;
import io.quarkus.arc.Arc;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import io.vertx.ext.web.RoutingContext;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Turns checked requests into generation jobs: resolves the model, builds and checks the prompts, fits the token
 * budget to the context, asks the model's router where the request runs (when it routes), and hands the job through
 * the admission gate to the model. The reply is a JSON response or a stream of events.
 */
@ApplicationScoped
public class GenerationService {
    private static final Logger LOG = Logger.getLogger(GenerationService.class);

    @Inject
    ModelService models;

    @Inject
    Admission admission;

    @Inject
    ApiMetrics metrics;

    @Inject
    ObjectMapper mapper;

    @Inject
    dev.laneway.runtime.serve.LanewayConfig config;

    /** The server's sampling defaults, for the fields a request leaves out. */
    RequestDefaults defaults() {
        return RequestDefaults.of(config);
    }

    /** {@code /v1/completions}, or llama-server's {@code /completion} ({@code llama}). */
    Answer complete(CompletionRequest request, boolean llama) {
        return complete(request, (model, name, params, choiceTexts, promptTokens) -> llama
                ? new NativeCompletionFormat(name, model.info().contextLength(), params, choiceTexts,
                request.returnTokens(), request.responseFields(), model.endOfGeneration())
                : verbose(new CompletionFormat(ReplyHeader.fresh("cmpl-", model, name), params.wantsLogprobs()),
                request.verbose(), model, name, params, choiceTexts));
    }

    /** A completion answered in {@code reply}'s format (Ollama's raw generation). */
    Answer complete(CompletionRequest request, Reply reply) {
        return complete(request, (model, name, params, choiceTexts, promptTokens) -> reply.format(model, name,
                params, promptTokens));
    }

    /** A completion's format, from its choices' prompts as the model read them. */
    @FunctionalInterface
    private interface CompletionReply {
        ReplyFormat format(ServedModel model, String name, GenerationParams params, List<String> choiceTexts,
                           int promptTokens);
    }

    private Answer complete(CompletionRequest request, CompletionReply reply) {
        ServedModel model = modelFor(request.model());
        GenerationParams params = withAdapters(request.model(), model, request.params());
        if (!request.textBiases().isEmpty()) {
            Map<Integer, Float> bias = new HashMap<>();
            request.textBiases().forEach((text, b) -> {
                for (int id : model.tokenize(text, false, false)) {
                    bias.put(id, b);
                }
            });
            params = params.withLogitBias(bias);
        }
        List<ChoicePlan> plans = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        List<String> choiceTexts = new ArrayList<>();
        int promptTokens = 0;
        for (CompletionRequest.Prompt prompt : request.prompts()) {
            int[] ids = prompt instanceof CompletionRequest.TextPrompt text ? tokenize(model, text.text(), "prompt")
                    : prompt instanceof CompletionRequest.TokenPrompt tokens ? checkIds(model, tokens.ids())
                    : mixedIds(model, (CompletionRequest.MixedPrompt) prompt);
            String text = prompt instanceof CompletionRequest.TextPrompt t ? t.text() : model.detokenize(ids);
            texts.add(text);
            promptTokens += ids.length;
            addChoices(plans, model, ids, params, "prompt", config.contextShift());
            // The answer shows the prompt as the model read it: its tokens detokenized, BOS and all.
            String read = model.detokenize(ids);
            while (choiceTexts.size() < plans.size()) {
                choiceTexts.add(read);
            }
        }
        Optional<RouteDecision> route = route(model, RoutingInput.prompt(String.join("\n", texts)));
        ReplyFormat format = reply.format(model, shownName(request.model(), model), params, choiceTexts,
                promptTokens);
        return run(model, route, plans, promptTokens, params, format, AnswerReading.PLAIN);
    }

    /** llama-server's sequence of ids and texts: each text tokenized where it stands, special tokens first only. */
    private static int[] mixedIds(ServedModel model, CompletionRequest.MixedPrompt prompt) {
        List<int[]> pieces = new ArrayList<>();
        int length = 0;
        for (Object part : prompt.parts()) {
            int[] ids = part instanceof Integer id ? checkIds(model, new int[]{id}) : tokenizePart(model,
                    (String) part, pieces.isEmpty());
            pieces.add(ids);
            length += ids.length;
        }
        int[] ids = new int[length];
        int at = 0;
        for (int[] piece : pieces) {
            System.arraycopy(piece, 0, ids, at, piece.length);
            at += piece.length;
        }
        return ids;
    }

    private static int[] tokenizePart(ServedModel model, String text, boolean first) {
        try {
            return model.tokenize(text, first, true);
        } catch (InvalidRequestException e) {
            throw ApiException.invalidValue("prompt", e.getMessage());
        }
    }

    /**
     * The format of a request's answer, made once its model, parameters and prompt are known; {@code name} is the
     * model as the answer names it (the request's adapter, else the model's id).
     */
    @FunctionalInterface
    interface Reply {
        ReplyFormat format(ServedModel model, String name, GenerationParams params, int promptTokens);
    }

    /** OpenAI's {@code chat.completion}. */
    static final Reply OPENAI_CHAT = (model, name, params, promptTokens) -> new ChatFormat(
            ReplyHeader.fresh("chatcmpl-", model, name), params.wantsLogprobs());

    /** {@code /v1/chat/completions}. */
    Answer chat(ChatRequest request) {
        return chat(request, OPENAI_CHAT);
    }

    /** A chat request, answered in {@code reply}'s format (Anthropic's Messages, OpenAI's Responses). */
    Answer chat(ChatRequest request, Reply reply) {
        ServedModel model = modelFor(request.model());
        Optional<ToolUse> tools = toolUse(model, request);
        GenerationParams params = withAdapters(request.model(), model, request.params());
        if (tools.isPresent()) {
            Optional<OutputGrammar> calls = ToolCallGrammar.of(tools.get().format(),
                    model.chatTemplateSource().orElse(""), OfferedTool.of(request.tools()), request.toolChoice(),
                    request.parallelToolCalls());
            if (calls.isPresent() && params.grammar().isPresent()) {
                throw ApiException.invalidValue(params.grammar().get().field(), params.grammar().get().field()
                        + " cannot be combined with tools that constrain the answer (tool_choice required or named,"
                        + " or a template without a tool-call format of its own)");
            }
            params = calls.map(params::withGrammar).orElse(params);
        }
        ChatPrompt prompt = prompt(model, request);
        int[] ids = prompt.ids();
        if (ids.length == 0) {
            throw ApiException.invalidValue("messages", "messages is empty: it gives no tokens");
        }
        List<ChoicePlan> plans = new ArrayList<>();
        addChoices(plans, model, ids, params, "messages", config.contextShift());
        Optional<RouteDecision> route = route(model, RoutingInput.chat(request.messages()));
        boolean thinks = request.reasoningSplit()
                && model.chatTemplateSource().map(ReasoningSplit::writtenBy).orElse(false);
        String name = shownName(request.model(), model);
        ReplyFormat format = reply.format(model, name, params, ids.length);
        if (reply == OPENAI_CHAT) {
            format = verbose(format, request.verbose(), model, name, params, Collections.nCopies(plans.size(),
                    model.detokenize(ids)));
        }
        return run(model, route, plans, ids.length, params, format,
                new AnswerReading(tools, thinks, thinks && ReasoningSplit.opensIn(prompt.text())));
    }

    /** With {@code serve --verbose} or the request's {@code verbose}, the answer with {@code __verbose} added. */
    private ReplyFormat verbose(ReplyFormat format, boolean asked, ServedModel model, String name,
                                GenerationParams params, List<String> prompts) {
        if (!asked && !config.verbose()) {
            return format;
        }
        return new VerboseFormat(format, new NativeCompletionFormat(name, model.info().contextLength(), params,
                prompts, false, List.of(), model.endOfGeneration()));
    }

    /**
     * The conversation as the model's chat template renders it, with the request's tools and template kwargs, and its
     * tokens; for a template without a tool-call format, the tools are described in the system message instead.
     * Special-token text the client wrote is tokenized as text ({@link ChatPrompt}).
     */
    ChatPrompt prompt(ServedModel model, ChatRequest request) {
        Map<String, Object> variables = new LinkedHashMap<>(request.templateKwargs());
        if (model.chatTemplateSource().isPresent()) {
            // serve --reasoning: a Jinja template that can think does, unless the request or the server says not.
            variables.putIfAbsent("enable_thinking", defaults().enableThinking());
        }
        List<ChatMessage> messages = request.messages();
        if (toolFormat(model) == ToolCallFormat.GENERIC) {
            if (GenericToolPrompt.needed(messages, request.tools())) {
                messages = GenericToolPrompt.messages(messages, OfferedTool.of(request.tools()), request.toolChoice(),
                        request.parallelToolCalls());
            }
        } else if (!request.tools().isEmpty()) {
            variables.put("tools", request.tools());
        }
        boolean continueFinal = request.continueFinal();
        boolean open = request.addGenerationPrompt();
        try {
            return ChatPrompt.of(model, messages, variables, (m, v) -> {
                if (!continueFinal) {
                    return v.isEmpty() ? model.renderChat(m, open) : model.renderChat(m, open, v);
                }
                // The answer continues the last, assistant, message: the turn opened, its text after it.
                List<ChatMessage> head = m.subList(0, m.size() - 1);
                String prefill = m.get(m.size() - 1).content();
                return (v.isEmpty() ? model.renderChat(head, true) : model.renderChat(head, true, v))
                        + (prefill == null ? "" : prefill);
            });
        } catch (InvalidRequestException e) {
            throw ApiException.invalidValue(e.param() == null ? "messages" : e.param(), e.getMessage());
        }
    }

    /** How the answer's tool calls are read, when the request offers tools: the format the model's template writes. */
    private static Optional<ToolUse> toolUse(ServedModel model, ChatRequest request) {
        if (request.tools().isEmpty()) {
            return Optional.empty();
        }
        if (request.params().wantsLogprobs()) {
            throw ApiException.invalidValue("logprobs", "logprobs together with tools are not supported");
        }
        return Optional.of(new ToolUse(toolFormat(model), request.parallelToolCalls()));
    }

    /** The format the model's template writes tool calls in: its own, or the generic JSON answer. */
    private static ToolCallFormat toolFormat(ServedModel model) {
        return model.chatTemplateSource().flatMap(ToolCallFormat::of).orElse(ToolCallFormat.GENERIC);
    }

    /**
     * The router's decision for a checked request, when the model routes (--laya). It is made here, before the
     * response starts, so that every response can carry it in its header.
     *
     * @throws ApiException 502 when the router fails (its scorer); the server goes on serving
     */
    private static Optional<RouteDecision> route(ServedModel model, RoutingInput input) {
        try {
            return model.route(input);
        } catch (RouterException e) {
            LOG.warnf("request not routed: %s", e.getMessage());
            throw ApiException.routerFailed(e.getMessage());
        }
    }

    /**
     * The parameters with the LoRA adapters the generation applies: the adapter the request's model names, at scale 1;
     * for the base model, the request's {@code lora} scales (llama-server's, by adapter number) over the server's.
     *
     * @throws ApiException 400 for a {@code lora} entry that names no adapter, or scales with an adapter's id
     */
    private GenerationParams withAdapters(Optional<String> requested, ServedModel model, GenerationParams params) {
        Optional<AdapterCatalog.Adapter> named = namedAdapter(requested);
        if (named.isPresent()) {
            if (!params.lora().isEmpty()) {
                throw ApiException.invalidValue("lora", "lora sets the base model's adapter scales; model names the"
                        + " adapter " + named.get().name() + ", which applies at scale 1");
            }
            return params.withAdapters(List.of(new AdapterUse(named.get().name(), 1f)));
        }
        List<AdapterCatalog.Adapter> of = models.adapters().of(model.id());
        for (int id : params.lora().keySet()) {
            if (id >= of.size()) {
                throw ApiException.invalidValue("lora", "lora names adapter " + id + "; the model has "
                        + of.size() + " (0 to " + (of.size() - 1) + ", see /lora-adapters)");
            }
        }
        List<AdapterUse> uses = new ArrayList<>();
        for (int id = 0; id < of.size(); id++) {
            String name = of.get(id).name();
            float scale = params.lora().getOrDefault(id, models.adapters().scale(name));
            if (scale != 0) {
                uses.add(new AdapterUse(name, scale));
            }
        }
        return uses.isEmpty() ? params : params.withAdapters(uses);
    }

    /** The name an answer gives its model: the adapter the request names, else the model's id. */
    private String shownName(Optional<String> requested, ServedModel model) {
        return namedAdapter(requested).map(AdapterCatalog.Adapter::name).orElse(model.id());
    }

    /** The LoRA adapter the request's {@code model} names, when it names one rather than a model. */
    private Optional<AdapterCatalog.Adapter> namedAdapter(Optional<String> requested) {
        return requested.filter(name -> models.find(name).isEmpty()).flatMap(name -> models.adapters().find(name));
    }

    /**
     * Refuses a request that names an adapter for work an adapter does not change (embeddings, ranking).
     *
     * @throws ApiException 400 naming the adapter
     */
    void refuseAdapter(Optional<String> requested, String work) {
        namedAdapter(requested).ifPresent(a -> {
                    throw ApiException.invalidValue("model", "model " + a.name() + " is a LoRA adapter, which "
                            + "changes generation; " + work + " come from its base model " + a.base());
                });
    }

    /** The model a request names (the default one when it names none), loaded and held for the request. */
    ServedModel modelFor(Optional<String> requested) {
        return readyModel(managed(requested));
    }

    /**
     * The model a request names, by any of its names, without loading it; the default model when it names none, or
     * names another with {@code --accept-any-model}.
     *
     * @throws ApiException 404 naming the models served, or 503 while the server starts or stops
     */
    ManagedModel managed(Optional<String> requested) {
        switch (models.state()) {
            case LOADING -> throw ApiException.notReady("the model is loading; retry shortly");
            case FAILED -> throw ApiException.notReady("the model failed to load");
            case DRAINING -> throw ApiException.shuttingDown("the server is shutting down; retry elsewhere or later");
            case READY -> { }
        }
        Optional<ManagedModel> named = requested.flatMap(models::find).or(() -> requested
                .flatMap(name -> models.adapters().find(name)).flatMap(a -> models.find(a.base())));
        if (named.isPresent()) {
            return named.get();
        }
        if (requested.isPresent() && !config.acceptAnyModel()) {
            List<String> served = new ArrayList<>(models.models().stream().map(ManagedModel::id).toList());
            models.adapters().all().forEach(a -> served.add(a.name()));
            throw ApiException.modelNotFound(requested.get(), served);
        }
        return models.defaultModel().orElseThrow(() -> ApiException.notReady("no model is served"));
    }

    /** The default model, without loading it. */
    ManagedModel managed() {
        return managed(Optional.empty());
    }

    /**
     * The model for work: loaded first if it is not, and held until the HTTP request that asks for it has ended (its
     * answer sent or its connection closed).
     *
     * @throws ApiException 503 when it cannot be loaded now, saying why
     */
    ServedModel readyModel(ManagedModel managed) {
        RoutingContext request = currentRequest();
        if (request != null && request.get(HOLDS_MODEL) == managed && managed.model().isPresent()) {
            return managed.model().get();
        }
        ServedModel held;
        try {
            held = managed.acquire(models.loadWait());
        } catch (ManagedModel.Unavailable e) {
            throw e.stopping ? ApiException.shuttingDown(e.getMessage()) : ApiException.notReady(e.getMessage());
        }
        if (request == null || request.get(HOLDS_MODEL) != null) {
            managed.release();  // no request to hold it for, or one that holds another model already
        } else {
            request.put(HOLDS_MODEL, managed);
            request.addEndHandler(done -> managed.release(Optional.ofNullable(request.get(KEEP_ALIVE))));
        }
        return held;
    }

    /** The default model for work, as {@link #readyModel(ManagedModel)}. */
    ServedModel readyModel() {
        return readyModel(managed());
    }

    /**
     * How long the model is to stay open once the current HTTP request has ended and no other uses it (Ollama's
     * {@code keep_alive}; negative: until the server stops).
     */
    void keepAlive(java.time.Duration keepAlive) {
        RoutingContext request = currentRequest();
        if (request != null) {
            request.put(KEEP_ALIVE, keepAlive);
        }
    }

    /**
     * What a model is, without loading it when it has been loaded before: for answers that only describe it. One never
     * loaded is loaded first, since only its route knows what it is.
     */
    ManagedModel.Description describedModel(Optional<String> requested) {
        ManagedModel m = managed(requested);
        if (m.description().isEmpty()) {
            readyModel(m);
        }
        return m.description().orElseThrow(() -> ApiException.notReady("the model " + m.id() + " is not loaded"));
    }

    /** What the default model is, as {@link #describedModel(Optional)}. */
    ManagedModel.Description describedModel() {
        return describedModel(Optional.empty());
    }

    /** The key of a request's mark that it holds the model awake. */
    private static final String HOLDS_MODEL = "laneway.holds-model";
    /** The key of a request's keep-alive for the model. */
    private static final String KEEP_ALIVE = "laneway.keep-alive";

    private static RoutingContext currentRequest() {
        if (!Arc.container().requestContext().isActive()) {
            return null;
        }
        CurrentVertxRequest current = Arc.container().instance(CurrentVertxRequest.class).get();
        return current == null ? null : current.getCurrent();
    }

    private Answer run(ServedModel model, Optional<RouteDecision> route, List<ChoicePlan> plans, int promptTokens,
                       GenerationParams params, ReplyFormat format, AnswerReading reading) {
        if (params.stream()) {
            RoutingContext request = currentRequest();
            AtomicReference<GenerationJob> running = new AtomicReference<>();
            StreamBacklog frames = new StreamBacklog(config.client().maxBacklogBytes(),
                    TimeUnit.SECONDS.toNanos(config.client().stallSeconds()), () -> giveUp(running.get(), request));
            GenerationJob job = new GenerationJob(model, route, plans, promptTokens, params, reading,
                    new StreamReply(format, frames, params, mapper), metrics::generation);
            running.set(job);
            admission.submit(job);
            cancelWhenGone(job, request);
            return new Answer.Stream(frames.frames().onTermination().invoke(job::cancel), route,
                    format.streamType());
        }
        CompletableFuture<HttpReply> reply = new CompletableFuture<>();
        GenerationJob job = new GenerationJob(model, route, plans, promptTokens, params, reading,
                new CollectedReply(format, reply, mapper), metrics::generation);
        admission.submit(job);
        cancelWhenGone(job, currentRequest());
        return new Answer.Whole(Uni.createFrom().completionStage(reply).onCancellation().invoke(job::cancel), route);
    }

    /**
     * Stops a job once its HTTP exchange is over (after its answer it has ended anyway), and at once when the client
     * has already gone: one that leaves before its request is admitted never subscribes to the answer, so nothing
     * else would stop it.
     */
    private static void cancelWhenGone(GenerationJob job, RoutingContext request) {
        if (request == null) {
            return;
        }
        request.addEndHandler(done -> job.cancel());
        if (request.response().closed()) {
            job.cancel();
        }
    }

    /** A stream's client stopped reading: its generation stops and its connection is closed. */
    private void giveUp(GenerationJob job, RoutingContext request) {
        LOG.warnf("a client stopped reading its stream (nothing taken for %d s, or %d bytes waiting): its"
                + " generation is stopped and its connection closed", config.client().stallSeconds(),
                config.client().maxBacklogBytes());
        metrics.clientGivenUp();
        job.cancel();
        if (request != null) {
            request.response().reset();
        }
    }

    /**
     * n choices of one prompt, after checking that the prompt leaves room for at least one token. With
     * {@code contextShift}, a choice that fills the context goes on by shifting it, keeping the model's leading
     * special tokens and the request's {@code n_keep} prompt tokens after them.
     */
    private static void addChoices(List<ChoicePlan> plans, ServedModel model, int[] ids, GenerationParams params,
                                   String param, boolean contextShift) {
        params.grammar().ifPresent(grammar -> {
            try {
                model.checkGrammar(grammar);
            } catch (InvalidRequestException e) {
                throw ApiException.invalidValue(e.param() == null ? grammar.field() : e.param(), e.getMessage());
            }
        });
        int vocab = model.info().vocabSize();
        params.logitBias().keySet().stream().filter(id -> id >= vocab).findFirst().ifPresent(id -> {
            throw ApiException.invalidValue("logit_bias", "logit_bias names token " + id + ", outside the vocabulary"
                    + " (0 to " + (vocab - 1) + ")");
        });
        int context = model.info().contextLength();
        if (ids.length >= context) {
            throw ApiException.contextExceeded(param, "the prompt (" + ids.length + " tokens) exceeds the available"
                    + " context size (" + context + " tokens): at least one token must stay free for the completion",
                    ids.length, context);
        }
        int room = context - ids.length;
        int maxTokens = contextShift ? params.maxTokens().orElse(room) : Math.min(room, params.maxTokens().orElse(room));
        int keep = GenerationRequest.NO_SHIFT;
        if (contextShift) {
            keep = params.nKeep() < 0 ? ids.length
                    : Math.min(ids.length, model.tokenize("", true, false).length + params.nKeep());
        }
        for (int j = 0; j < params.n(); j++) {
            plans.add(new ChoicePlan(plans.size(), ids, maxTokens, params.sampling(j), keep));
        }
    }

    private static int[] tokenize(ServedModel model, String text, String param) {
        int[] ids;
        try {
            ids = model.tokenize(text, true, true);
        } catch (InvalidRequestException e) {
            throw ApiException.invalidValue(param, e.getMessage());
        }
        if (ids.length == 0) {
            throw ApiException.invalidValue(param, param + " is empty: it gives no tokens");
        }
        return ids;
    }

    private static int[] checkIds(ServedModel model, int[] ids) {
        int vocab = model.info().vocabSize();
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw ApiException.invalidValue("prompt", "token id " + id + " is outside the vocabulary (0 to "
                        + (vocab - 1) + ")");
            }
        }
        return ids;
    }

    /** A reply: a whole JSON response, or a stream of server-sent events; either with the router's decision. */
    sealed interface Answer permits Answer.Whole, Answer.Stream {
        /** Where the request runs, when the model routes requests. */
        Optional<RouteDecision> route();

        record Whole(Uni<HttpReply> reply, Optional<RouteDecision> route) implements Answer {
        }

        /** @param contentType server-sent events, or Ollama's newline-delimited JSON */
        record Stream(Multi<byte[]> frames, Optional<RouteDecision> route, String contentType) implements Answer {
        }
    }
}
