package dev.laneway.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A model opened by a route, ready to generate. Thread-safe: the runtime calls {@link #submit} and the tokenizer
 * methods from any thread.
 */
public interface ServedModel extends AutoCloseable {

    /** The id clients use: the alias when one was given, else a name derived from the directory. */
    String id();

    /** What the model is and where it runs. */
    ModelInfo info();

    /**
     * Tokenizes text.
     *
     * @param addSpecial   add the model's leading special tokens (BOS) where its tokenizer does
     * @param parseSpecial recognise special-token text such as {@code <|im_end|>} as the special token
     */
    int[] tokenize(String text, boolean addSpecial, boolean parseSpecial);

    /** Turns token ids back into text; special tokens are rendered as their text. */
    String detokenize(int[] ids);

    /**
     * The texts that {@link #tokenize}'s {@code parseSpecial} turns into special (control) tokens, such as
     * {@code <|im_start|>}: the runtime keeps them from being read as control tokens where a client wrote them.
     */
    Set<String> specialTokenTexts();

    /**
     * Waits at most {@code timeout} for work the model goes on doing after it opens, which it serves without (faster
     * copies of its weights, made on idle cores); returns whether none is left. For measuring the model's speed.
     */
    default boolean awaitBackgroundWork(Duration timeout) {
        return true;
    }

    /**
     * Renders a conversation with the model's chat template.
     *
     * @throws InvalidRequestException when the template rejects the conversation (e.g. roles out of order)
     */
    String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt);

    /** The Jinja source of the model's chat template, when it has one (tool-call formats are read from it). */
    default Optional<String> chatTemplateSource() {
        return Optional.empty();
    }

    /**
     * Renders a conversation with extra template variables ({@code tools}, a request's {@code chat_template_kwargs}
     * such as {@code enable_thinking}); the template's standard variables win over extras of the same name. A model
     * without a template engine that takes variables refuses any.
     *
     * @throws InvalidRequestException when the template rejects the conversation, or the model takes no variables
     */
    default String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        if (!variables.isEmpty()) {
            throw new InvalidRequestException(variables.keySet().iterator().next(), "this model's chat template takes"
                    + " no variables besides the conversation");
        }
        return renderChat(messages, addGenerationPrompt);
    }

    /**
     * Generates a continuation of {@code request.prompt()}, handing each token to {@code sink} as it is chosen.
     * Returns when the model ends the text, the token budget is spent, or the sink asks to stop. A model that routes
     * requests ({@link #route}) routes one that comes without a decision by its prompt's text.
     *
     * @throws InvalidRequestException when the request cannot be served as asked (e.g. it does not fit the context)
     * @throws DeviceFaultException    when the device failed this generation; the model stays usable
     */
    GenerationResult generate(GenerationRequest request, TokenSink sink);

    /**
     * Generates continuations of several requests, request i's tokens going to {@code sinks.get(i)}, and returns their
     * results in order: the choices of one request ({@code n} > 1). A model with several streams runs them at once as
     * far as it has streams free, so that they share their prompt's KV cache and decode in one batch; by default they
     * run one after another.
     *
     * @throws InvalidRequestException as {@link #generate(GenerationRequest, TokenSink)}
     * @throws DeviceFaultException    when the device failed one of them; the others stop at their next token
     */
    default List<GenerationResult> generateAll(List<GenerationRequest> requests, List<? extends TokenSink> sinks) {
        List<GenerationResult> results = new java.util.ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            results.add(generate(requests.get(i), sinks.get(i)));
        }
        return results;
    }

    /**
     * Starts the generations of one request (its choices) and returns at once: request i's tokens go to
     * {@code sinks.get(i)}, on the device {@code decision} names when there is one (a decision this model's
     * {@link #route} gave). The future completes with their results in order, or with the first failure
     * ({@link InvalidRequestException}, {@link DeviceFaultException}) once none of them runs; a generation whose sink
     * reports its consumer gone ({@link TokenSink#cancelled}) before it starts has no result (null). A model with an
     * engine loop hands them to it; by default they run one after another on a thread of their own.
     */
    default java.util.concurrent.CompletableFuture<List<GenerationResult>> submit(List<GenerationRequest> requests,
            Optional<RouteDecision> decision, List<? extends TokenSink> sinks) {
        java.util.concurrent.CompletableFuture<List<GenerationResult>> done =
                new java.util.concurrent.CompletableFuture<>();
        if (requests.stream().anyMatch(r -> r.slot() != GenerationRequest.ANY_SLOT)) {
            done.completeExceptionally(new InvalidRequestException("id_slot", "this model has no streams to choose"
                    + " from"));
            return done;
        }
        Thread thread = new Thread(() -> {
            try {
                List<GenerationResult> results = new java.util.ArrayList<>();
                for (int i = 0; i < requests.size(); i++) {
                    TokenSink sink = sinks.get(i);
                    results.add(sink.cancelled() ? null : decision.isPresent()
                            ? generate(requests.get(i), decision.get(), sink) : generate(requests.get(i), sink));
                }
                done.complete(results);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }, "laneway-generation");
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    /**
     * The embeddings of prompts: each prompt computed afresh, its hidden states after the final norm pooled as
     * {@code pooling} says, not normalised; in order. The future fails with {@link InvalidRequestException} when a
     * prompt does not fit the context; a prompt whose {@code consumer} has gone before it starts is not computed.
     *
     * @throws UnsupportedOperationException when this model cannot give its hidden states
     */
    default java.util.concurrent.CompletableFuture<List<float[]>> embed(List<int[]> prompts, Pooling pooling,
                                                                       TokenSink consumer) {
        throw new UnsupportedOperationException("this model cannot give embeddings");
    }

    /**
     * A reranker's prompt for a query and a document, as the model reads them for {@link Pooling#RANK}: its rerank
     * template with both in place, or without one the two texts each ended as the tokenizer ends a text. The
     * client's texts are data: a special token they spell is read as text.
     *
     * @throws UnsupportedOperationException when this model has no ranking head
     */
    default int[] rankPrompt(String query, String document) {
        throw new UnsupportedOperationException("this model does not rank: it has no ranking head");
    }

    /** The tokens that end a generation (end of text, end of turn), which {@code ignore_eos} generates past. */
    default int[] endOfGeneration() {
        return new int[0];
    }

    /**
     * Writes what stream {@code slot}'s KV cache holds (its tokens, their keys and values) to {@code file}, once no
     * generation runs in it (llama-server's slot save). The future fails with {@link InvalidRequestException} when
     * there is no such stream or the file cannot be written.
     *
     * @throws UnsupportedOperationException when this model's streams cannot be saved
     */
    default java.util.concurrent.CompletableFuture<SlotTransfer> saveSlot(int slot, java.nio.file.Path file) {
        throw new UnsupportedOperationException("this model's streams cannot be saved or restored");
    }

    /**
     * Fills stream {@code slot}'s KV cache from a file {@link #saveSlot} wrote for this model, once no generation runs
     * in it; a later prompt that begins with the restored tokens computes only the rest. The future fails with
     * {@link InvalidRequestException} naming what is wrong with the file, and the stream is then left empty.
     *
     * @throws UnsupportedOperationException when this model's streams cannot be saved
     */
    default java.util.concurrent.CompletableFuture<SlotTransfer> restoreSlot(int slot, java.nio.file.Path file) {
        throw new UnsupportedOperationException("this model's streams cannot be saved or restored");
    }

    /**
     * Empties stream {@code slot}'s KV cache once no generation runs in it; the future holds the tokens it held.
     *
     * @throws UnsupportedOperationException when this model's streams cannot be saved
     */
    default java.util.concurrent.CompletableFuture<Integer> eraseSlot(int slot) {
        throw new UnsupportedOperationException("this model's streams cannot be saved or restored");
    }

    /**
     * Where a request runs, when this model routes requests across devices ({@code --laya}); empty when it does not.
     * A routing model decides once per conversation and reuses the decision for its later turns. The runtime calls
     * this before {@link #generate(GenerationRequest, RouteDecision, TokenSink)} and shows the decision to the client.
     *
     * @throws RouterException when the router cannot decide (its scorer failed); that request fails, the model stays
     *                         usable
     */
    default Optional<RouteDecision> route(RoutingInput input) {
        return Optional.empty();
    }

    /**
     * Generates on the device {@code decision} names, a decision this model's {@link #route} gave. A model that does
     * not route never gives one, so the default simply generates.
     *
     * @throws IllegalArgumentException when the decision names a device that is not one of the model's candidates
     */
    default GenerationResult generate(GenerationRequest request, RouteDecision decision, TokenSink sink) {
        return generate(request, sink);
    }

    /**
     * Checks, before a generation starts, that {@code grammar} can constrain this model's output
     * ({@link GenerationRequest#grammar()}). A model that cannot constrain its output refuses every grammar.
     *
     * @throws InvalidRequestException naming what is wrong with the grammar (against its field), or that grammars
     *                                 are not supported
     */
    default void checkGrammar(OutputGrammar grammar) {
        throw new InvalidRequestException(grammar.field(), "model " + id() + " does not constrain its output to a"
                + " grammar or schema");
    }

    /**
     * Whether a generation that fills the context can go on by shifting it ({@link GenerationRequest#shiftKeep}); a
     * model that cannot ends such a generation where the context does.
     */
    default boolean shiftsContext() {
        return false;
    }

    /**
     * Loads the LoRA adapter at {@code path} (a GGUF adapter file, or a PEFT directory) under {@code name}, for
     * generations that name it ({@link GenerationRequest#adapters()}); a loaded adapter of that name is replaced, the
     * generations already running keeping the one they started with.
     *
     * @throws IllegalArgumentException naming what does not fit: the architecture, a tensor the model has not, a shape
     * @throws java.io.IOException      when the adapter cannot be read
     * @throws UnsupportedOperationException when this model does not apply adapters, with why
     */
    default ModelAdapter loadAdapter(String name, java.nio.file.Path path) throws java.io.IOException {
        throw new UnsupportedOperationException("model " + id() + " does not apply LoRA adapters");
    }

    /** Unloads the adapter of that name; false when none was loaded. Running generations keep theirs to the end. */
    default boolean unloadAdapter(String name) {
        return false;
    }

    /** The adapters loaded, in the order they were. */
    default List<ModelAdapter> adapters() {
        return List.of();
    }

    /** How much of the KV cache running generations hold now; {@link KvUse#NONE} where the model does not say. */
    default KvUse kvUse() {
        return KvUse.NONE;
    }

    /** What its forward steps have run so far; none for a model that has no engine loop to count. */
    default StepCounts steps() {
        return StepCounts.NONE;
    }

    /** Whether the model is able to serve, with data for the readiness check. */
    default ModelHealth health() {
        return ModelHealth.healthy();
    }

    /**
     * The latest device faults, oldest first, each as JSON-ready facts (device, kernel, layer, position, timings,
     * argument digests, ...), for {@code GET /v1/diagnostics}.
     */
    default List<java.util.Map<String, Object>> faults() {
        return List.of();
    }

    /** Releases the weights and devices. */
    @Override
    void close();
}
