package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RouterException;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.ServedModel;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

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

    /** {@code /v1/completions}. */
    Answer complete(CompletionRequest request) {
        ServedModel model = modelFor(request.model());
        GenerationParams params = request.params();
        List<ChoicePlan> plans = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        int promptTokens = 0;
        for (CompletionRequest.Prompt prompt : request.prompts()) {
            int[] ids;
            if (prompt instanceof CompletionRequest.TextPrompt text) {
                ids = tokenize(model, text.text(), "prompt");
                texts.add(text.text());
            } else {
                ids = checkIds(model, ((CompletionRequest.TokenPrompt) prompt).ids());
                texts.add(model.detokenize(ids));
            }
            promptTokens += ids.length;
            addChoices(plans, model, ids, params, "prompt");
        }
        Optional<RouteDecision> route = route(model, RoutingInput.prompt(String.join("\n", texts)));
        ReplyHeader header = ReplyHeader.fresh("cmpl-", model.id());
        return run(model, route, plans, promptTokens, params, new CompletionFormat(header, params.wantsLogprobs()),
                AnswerReading.PLAIN);
    }

    /** {@code /v1/chat/completions}. */
    Answer chat(ChatRequest request) {
        ServedModel model = modelFor(request.model());
        Optional<ToolUse> tools = toolUse(model, request);
        GenerationParams params = request.params();
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
        addChoices(plans, model, ids, params, "messages");
        Optional<RouteDecision> route = route(model, RoutingInput.chat(request.messages()));
        ReplyHeader header = ReplyHeader.fresh("chatcmpl-", model.id());
        boolean thinks = request.reasoningSplit()
                && model.chatTemplateSource().map(ReasoningSplit::writtenBy).orElse(false);
        return run(model, route, plans, ids.length, params, new ChatFormat(header, params.wantsLogprobs()),
                new AnswerReading(tools, thinks, thinks && ReasoningSplit.opensIn(prompt.text())));
    }

    /**
     * The conversation as the model's chat template renders it, with the request's tools and template kwargs, and its
     * tokens; for a template without a tool-call format, the tools are described in the system message instead.
     * Special-token text the client wrote is tokenized as text ({@link ChatPrompt}).
     */
    ChatPrompt prompt(ServedModel model, ChatRequest request) {
        Map<String, Object> variables = new java.util.LinkedHashMap<>(request.templateKwargs());
        List<ChatMessage> messages = request.messages();
        if (toolFormat(model) == ToolCallFormat.GENERIC) {
            if (GenericToolPrompt.needed(messages, request.tools())) {
                messages = GenericToolPrompt.messages(messages, OfferedTool.of(request.tools()), request.toolChoice(),
                        request.parallelToolCalls());
            }
        } else if (!request.tools().isEmpty()) {
            variables.put("tools", request.tools());
        }
        try {
            return ChatPrompt.of(model, messages, variables, (m, v) -> v.isEmpty() ? model.renderChat(m, true)
                    : model.renderChat(m, true, v));
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

    /** The served model, when it is ready and is the one asked for. */
    ServedModel modelFor(Optional<String> requested) {
        ServedModel model = readyModel();
        if (requested.isPresent() && !requested.get().equals(model.id())) {
            throw ApiException.modelNotFound(requested.get(), model.id());
        }
        return model;
    }

    ServedModel readyModel() {
        return switch (models.state()) {
            case READY -> models.model().orElseThrow(() -> ApiException.notReady("the model is not loaded"));
            case LOADING -> throw ApiException.notReady("the model is loading; retry shortly");
            case FAILED -> throw ApiException.notReady("the model failed to load");
        };
    }

    private Answer run(ServedModel model, Optional<RouteDecision> route, List<ChoicePlan> plans, int promptTokens,
                       GenerationParams params, ReplyFormat format, AnswerReading reading) {
        if (params.stream()) {
            UnicastProcessor<byte[]> frames = UnicastProcessor.create();
            GenerationJob job = new GenerationJob(model, route, plans, promptTokens, params, reading,
                    new StreamReply(format, frames, params.includeUsage(), mapper), metrics::generation);
            admission.submit(job);
            return new Answer.Stream(frames.onTermination().invoke(job::cancel), route);
        }
        CompletableFuture<HttpReply> reply = new CompletableFuture<>();
        GenerationJob job = new GenerationJob(model, route, plans, promptTokens, params, reading,
                new CollectedReply(format, reply, mapper), metrics::generation);
        admission.submit(job);
        return new Answer.Whole(Uni.createFrom().completionStage(reply).onCancellation().invoke(job::cancel), route);
    }

    /** n choices of one prompt, after checking that the prompt leaves room for at least one token. */
    private static void addChoices(List<ChoicePlan> plans, ServedModel model, int[] ids, GenerationParams params,
                                   String param) {
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
            throw ApiException.contextExceeded(param, "the prompt is " + ids.length + " tokens, but the model's "
                    + "context holds " + context + " tokens, and at least one must stay free for the completion");
        }
        int room = context - ids.length;
        int maxTokens = Math.min(room, params.maxTokens().orElse(room));
        for (int j = 0; j < params.n(); j++) {
            plans.add(new ChoicePlan(plans.size(), ids, maxTokens, params.sampling(j)));
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

        record Stream(Multi<byte[]> frames, Optional<RouteDecision> route) implements Answer {
        }
    }
}
