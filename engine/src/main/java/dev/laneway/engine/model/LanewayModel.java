package dev.laneway.engine.model;

import dev.laneway.engine.lora.AdapterSet;
import dev.laneway.engine.lora.Adapters;
import dev.laneway.engine.lora.LoraAdapter;

import dev.laneway.engine.lane.Diagnostic;
import dev.laneway.engine.lane.LanePool;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ModelHealth;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.StepCounts;
import dev.laneway.spi.TokenCodec;
import dev.laneway.spi.TokenSink;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A served model built from engine parts: a tokenizer, a chat template and the lanes that generate. Routes differ
 * in how their lanes execute a token; everything a client sees is the same.
 */
public final class LanewayModel implements ServedModel {

    /** Renders a conversation into prompt text, with extra template variables ({@code tools}, ...). */
    public interface ChatRenderer {
        String render(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> variables);

        /** The template's Jinja source. */
        String source();
    }

    private final String id;
    private final ModelInfo info;
    private final TokenCodec tokenizer;
    private final ChatRenderer chat;
    private final LanePool lanes;
    private final Adapters adapters;
    private final java.util.Optional<RankingHead> ranking;
    private final Predicate<Duration> backgroundWork;
    private final AutoCloseable resources;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * @param backgroundWork waits at most the given time for the kernels' work after loading; whether it is done
     * @param resources      released on {@link #close()} (mapped weights, native state), or null
     */
    LanewayModel(String id, ModelInfo info, TokenCodec tokenizer, ChatRenderer chat, LanePool lanes,
                 Adapters adapters, java.util.Optional<RankingHead> ranking, Predicate<Duration> backgroundWork,
                 AutoCloseable resources) {
        this.id = id;
        this.adapters = adapters;
        this.info = info;
        this.tokenizer = tokenizer;
        this.chat = chat;
        this.lanes = lanes;
        this.ranking = ranking;
        this.backgroundWork = backgroundWork;
        this.resources = resources;
    }

    @Override
    public boolean awaitBackgroundWork(Duration timeout) {
        return backgroundWork.test(timeout);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public ModelInfo info() {
        return info;
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        return tokenizer.encode(text, addSpecial, parseSpecial);
    }

    @Override
    public String detokenize(int[] ids) {
        return tokenizer.decode(ids);
    }

    @Override
    public java.util.Set<String> specialTokenTexts() {
        return tokenizer.specialTexts();
    }

    @Override
    public void checkGrammar(dev.laneway.spi.OutputGrammar grammar) {
        lanes.checkGrammar(grammar);
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return chat.render(messages, addGenerationPrompt, Map.of());
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        return chat.render(messages, addGenerationPrompt, variables);
    }

    @Override
    public java.util.Optional<String> chatTemplateSource() {
        return java.util.Optional.of(chat.source());
    }

    @Override
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        return generateAll(List.of(request), List.of(sink)).get(0);
    }

    @Override
    public List<GenerationResult> generateAll(List<GenerationRequest> requests, List<? extends TokenSink> sinks) {
        return lanes.generateAll(requests, adapterSets(requests), sinks);
    }

    /** The generations go to the engine loop; this model runs on one device, so a decision changes nothing. */
    @Override
    public java.util.concurrent.CompletableFuture<List<GenerationResult>> submit(List<GenerationRequest> requests,
            java.util.Optional<dev.laneway.spi.RouteDecision> decision, List<? extends TokenSink> sinks) {
        try {
            return lanes.submit(requests, adapterSets(requests), sinks);
        } catch (dev.laneway.spi.InvalidRequestException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /** The adapters each request applies, null where none. */
    private List<AdapterSet> adapterSets(List<GenerationRequest> requests) {
        List<AdapterSet> sets = new java.util.ArrayList<>(requests.size());
        for (GenerationRequest r : requests) {
            sets.add(r.adapters().isEmpty() ? null : adapters.resolve(r.adapters()));
        }
        return sets;
    }

    @Override
    public dev.laneway.spi.ModelAdapter loadAdapter(String name, java.nio.file.Path path) throws java.io.IOException {
        return adapters.load(name, path).describe();
    }

    @Override
    public boolean unloadAdapter(String name) {
        return adapters.unload(name);
    }

    @Override
    public List<dev.laneway.spi.ModelAdapter> adapters() {
        return adapters.loaded().stream().map(LoraAdapter::describe).toList();
    }

    /**
     * The model's next-token logits after {@code prompt} (token ids, special tokens included), one per vocabulary
     * entry, before any sampling step. Runs on a free lane like a generation.
     *
     * @throws dev.laneway.spi.InvalidRequestException when the prompt does not fit the context
     * @throws dev.laneway.spi.DeviceFaultException    when the device fails it
     */
    public float[] nextTokenLogits(int[] prompt) {
        return lanes.nextTokenLogits(prompt);
    }

    @Override
    public java.util.concurrent.CompletableFuture<List<float[]>> embed(List<int[]> prompts,
                                                                      dev.laneway.spi.Pooling pooling,
                                                                      TokenSink consumer) {
        if (pooling != dev.laneway.spi.Pooling.RANK) {
            return lanes.embed(prompts, pooling, consumer);
        }
        RankingHead head = ranking.orElseThrow(() -> new UnsupportedOperationException("this model does not rank:"
                + " it has no ranking head (" + dev.laneway.engine.plan.StandardPlans.RANKING_HEAD + ")"));
        return lanes.embed(prompts, dev.laneway.spi.Pooling.LAST, consumer)
                .thenApply(states -> states.stream().map(s -> s == null ? null : head.scores(s)).toList());
    }

    @Override
    public int[] rankPrompt(String query, String document) {
        return ranking.orElseThrow(() -> new UnsupportedOperationException("this model does not rank: it has no"
                + " ranking head")).prompt(query, document);
    }

    @Override
    public java.util.concurrent.CompletableFuture<dev.laneway.spi.SlotTransfer> saveSlot(int slot,
                                                                                       java.nio.file.Path file) {
        return lanes.saveSlot(slot, file);
    }

    @Override
    public java.util.concurrent.CompletableFuture<dev.laneway.spi.SlotTransfer> restoreSlot(int slot,
                                                                                          java.nio.file.Path file) {
        return lanes.restoreSlot(slot, file);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Integer> eraseSlot(int slot) {
        return lanes.eraseSlot(slot);
    }

    @Override
    public int[] endOfGeneration() {
        return lanes.endOfGeneration();
    }

    @Override
    public StepCounts steps() {
        return lanes.steps();
    }

    @Override
    public dev.laneway.spi.KvUse kvUse() {
        return lanes.kvUse();
    }

    @Override
    public boolean shiftsContext() {
        return lanes.shiftsContext();
    }

    /** The lanes, for diagnostics. */
    public LanePool lanes() {
        return lanes;
    }

    /**
     * Down while the device is out of service (a step failed its whole retry budget, and no probe has passed since),
     * and while it recovers from a fault, with the latest faults in the data.
     */
    @Override
    public ModelHealth health() {
        Map<String, String> data = new LinkedHashMap<>();
        data.put("streams", Integer.toString(lanes.streams()));
        data.put("busy", Integer.toString(lanes.busy()));
        data.put("faults", Long.toString(lanes.faults().total()));
        data.put("contexts", Integer.toString(lanes.device().liveContexts()));
        List<Diagnostic> recent = lanes.faults().recent();
        for (int i = 0; i < Math.min(3, recent.size()); i++) {
            data.put("fault." + i, recent.get(recent.size() - 1 - i).line());
        }
        java.util.Optional<java.time.Duration> outOfService = lanes.outOfService();
        if (outOfService.isPresent()) {
            data.put("breaker", "open");
            return new ModelHealth(false, "device " + lanes.device().name() + " is out of service ("
                    + lanes.outOfServiceReason() + "); it is probed again in "
                    + Math.max(1, outOfService.get().toSeconds()) + " s", data);
        }
        boolean recovering = lanes.faults().recovering();
        return new ModelHealth(!recovering, recovering ? "device " + lanes.device().name()
                + " is recovering from a fault; the next successful generation clears it" : "", data);
    }

    @Override
    public List<Map<String, Object>> faults() {
        return lanes.faults().recent().stream().map(Diagnostic::asMap).toList();
    }

    @Override
    public void close() {
        if (resources != null && closed.compareAndSet(false, true)) {  // once: the resources may be shared
            try {
                resources.close();
            } catch (Exception e) {
                System.getLogger(LanewayModel.class.getName()).log(System.Logger.Level.WARNING,
                        "closing model " + id + ": " + e.getMessage());
            }
        }
    }
}
