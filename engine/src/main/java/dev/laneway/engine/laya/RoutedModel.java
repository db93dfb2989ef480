package dev.laneway.engine.laya;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ModelHealth;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import dev.laneway.spi.TokenSink;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A model served on several candidate devices with a Laya router choosing among them per request: the hook a route
 * uses to honour {@code --laya}. The route opens its model once per candidate device (sharing what it can, such as
 * the weights and the tokenizer) and hands the copies here with the router; requests then run on the copy of the
 * device the router decided. Everything else (id, tokenizer, chat template) comes from the first, the route's own
 * device.
 */
public final class RoutedModel implements ServedModel {
    private final LayaRouter router;
    private final Map<String, ServedModel> byDevice;
    private final ServedModel primary;
    private final ModelInfo info;

    /**
     * @param byDevice the model on each of the router's candidates, by device name, in the router's order
     * @throws IllegalArgumentException when the devices are not exactly the router's candidates
     */
    public RoutedModel(LayaRouter router, Map<String, ? extends ServedModel> byDevice) {
        if (!List.copyOf(byDevice.keySet()).equals(router.candidates())) {
            throw new IllegalArgumentException("the models' devices " + byDevice.keySet()
                    + " are not the router's candidates " + router.candidates());
        }
        this.router = router;
        this.byDevice = new LinkedHashMap<>(byDevice);
        this.primary = this.byDevice.values().iterator().next();
        ModelInfo own = primary.info();
        Map<String, String> metadata = new LinkedHashMap<>(own.metadata());
        metadata.put("laya.candidates", String.join(", ", router.candidates()));
        metadata.put("laya.policy", router.policy().describe());
        this.info = new ModelInfo(own.architecture(), own.contextLength(), own.vocabSize(), own.route(), own.device(),
                metadata);
    }

    @Override
    public String id() {
        return primary.id();
    }

    @Override
    public ModelInfo info() {
        return info;
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        return primary.tokenize(text, addSpecial, parseSpecial);
    }

    @Override
    public String detokenize(int[] ids) {
        return primary.detokenize(ids);
    }

    @Override
    public java.util.Set<String> specialTokenTexts() {
        return primary.specialTokenTexts();
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return primary.renderChat(messages, addGenerationPrompt);
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        return primary.renderChat(messages, addGenerationPrompt, variables);
    }

    @Override
    public Optional<String> chatTemplateSource() {
        return primary.chatTemplateSource();
    }

    /** A grammar must suit every device the request may be routed to. */
    @Override
    public void checkGrammar(dev.laneway.spi.OutputGrammar grammar) {
        for (ServedModel model : byDevice.values()) {
            model.checkGrammar(grammar);
        }
    }

    @Override
    public Optional<RouteDecision> route(RoutingInput input) {
        return Optional.of(router.route(input));
    }

    /** Routes the request by its prompt's text, as the model detokenizes it, then generates there. */
    @Override
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        return generate(request, router.route(RoutingInput.prompt(detokenize(request.prompt()))), sink);
    }

    @Override
    public GenerationResult generate(GenerationRequest request, RouteDecision decision, TokenSink sink) {
        return on(decision).generate(request, sink);
    }

    /** The generations go to the engine loop of the model on the decided device, by the first prompt without one. */
    @Override
    public java.util.concurrent.CompletableFuture<List<GenerationResult>> submit(List<GenerationRequest> requests,
            Optional<RouteDecision> decision, List<? extends TokenSink> sinks) {
        if (requests.stream().anyMatch(r -> r.slot() != GenerationRequest.ANY_SLOT)) {
            return java.util.concurrent.CompletableFuture.failedFuture(new dev.laneway.spi.InvalidRequestException(
                    "id_slot", "a routed model chooses its device per conversation; it has no stream to name"));
        }
        RouteDecision where = decision.orElseGet(() -> router.route(RoutingInput.prompt(detokenize(
                requests.get(0).prompt()))));
        return on(where).submit(requests, Optional.empty(), sinks);
    }

    private ServedModel on(RouteDecision decision) {
        ServedModel model = byDevice.get(decision.device());
        if (model == null) {
            throw new IllegalArgumentException("device " + decision.device() + " is not a candidate of model " + id()
                    + " (candidates: " + String.join(", ", byDevice.keySet()) + ")");
        }
        return model;
    }

    /** The router, for diagnostics and tests. */
    public LayaRouter router() {
        return router;
    }

    /** The model on one candidate device. */
    public Optional<ServedModel> on(String device) {
        return Optional.ofNullable(byDevice.get(device));
    }

    /** Up while every candidate is; the data of each, prefixed by its device when there are several. */
    @Override
    public ModelHealth health() {
        if (byDevice.size() == 1) {
            return primary.health();
        }
        Map<String, String> data = new LinkedHashMap<>();
        List<String> down = new ArrayList<>();
        byDevice.forEach((device, model) -> {
            ModelHealth h = model.health();
            h.data().forEach((k, v) -> data.put(device + "." + k, v));
            if (!h.up()) {
                down.add(h.reason());
            }
        });
        return new ModelHealth(down.isEmpty(), String.join("; ", down), data);
    }

    /** Whether every candidate can shift its context. */
    @Override
    public boolean shiftsContext() {
        return byDevice.values().stream().allMatch(ServedModel::shiftsContext);
    }

    /** The steps of every candidate together. */
    @Override
    public StepCounts steps() {
        return byDevice.values().stream().map(ServedModel::steps).reduce(StepCounts.NONE, StepCounts::plus);
    }

    /** The KV use of every candidate together. */
    @Override
    public dev.laneway.spi.KvUse kvUse() {
        return byDevice.values().stream().map(ServedModel::kvUse).reduce(dev.laneway.spi.KvUse.NONE,
                dev.laneway.spi.KvUse::plus);
    }

    /** Every candidate's latest faults, oldest first (each names its device). */
    @Override
    public List<Map<String, Object>> faults() {
        List<Map<String, Object>> all = new ArrayList<>();
        byDevice.values().forEach(m -> all.addAll(m.faults()));
        all.sort(Comparator.comparing(RoutedModel::when));
        return all;
    }

    private static Instant when(Map<String, Object> fault) {
        try {
            return Instant.parse(String.valueOf(fault.get("at")));
        } catch (DateTimeParseException e) {
            return Instant.MIN;
        }
    }

    /** Closes every device's model, then the router (and its scorer). */
    @Override
    public void close() {
        try {
            byDevice.values().forEach(ServedModel::close);
        } finally {
            router.close();
        }
    }
}
