package dev.laneway.engine.laya;

import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RoutingInput;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The Laya router of one served model: classifies each request's state, decides its device by the policy, keeps a
 * conversation's decision for its later turns, and logs every new decision as {@code laya: <class> <confidence>
 * <device>}.
 *
 * <p>A state of {@value #LONG_DOC_BYTES} UTF-8 bytes or more is {@code long_doc} with confidence 1, without asking
 * the classifier. A chat's decision is kept under the model id and the conversation's opening (its messages up to
 * and including the first user message) for {@value #CACHE_ENTRIES} conversations, least recently used dropped
 * first; completion prompts are decided each time.
 */
public final class LayaRouter implements AutoCloseable {
    /** States at least this long (UTF-8 bytes) are long documents. */
    public static final int LONG_DOC_BYTES = 1024;
    /** Conversations whose decisions are kept. */
    public static final int CACHE_ENTRIES = 4096;
    /** Where the router logs when not told otherwise. */
    public static final Consumer<String> SYSTEM_LOG = line -> System.getLogger(LayaRouter.class.getName())
            .log(System.Logger.Level.INFO, line);

    private final RoutePolicy policy;
    private final Classifier classifier;
    private final String modelId;
    private final List<String> candidates;
    private final Consumer<String> log;
    private final ConversationCache conversations = new ConversationCache(CACHE_ENTRIES);

    /**
     * Starts a router and logs its start-up line, naming the checkpoint, the policy, the classifier and the
     * candidates.
     *
     * @param candidates the devices the model runs on, the route's own first; not empty
     */
    public LayaRouter(Path checkpoint, RoutePolicy policy, Classifier classifier, String modelId,
                      List<String> candidates, Consumer<String> log) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.classifier = Objects.requireNonNull(classifier, "classifier");
        this.modelId = Objects.requireNonNull(modelId, "modelId");
        this.candidates = List.copyOf(candidates);
        this.log = Objects.requireNonNull(log, "log");
        if (this.candidates.isEmpty()) {
            throw new IllegalArgumentException("a router needs at least one candidate device");
        }
        log.accept("laya: checkpoint " + checkpoint + ", policy " + policy.describe() + "; classifier "
                + classifier.describe() + "; candidates " + String.join(", ", this.candidates));
    }

    /**
     * Where a request runs. A chat whose conversation was decided before gets that decision again, without
     * classifying or logging.
     *
     * @throws dev.laneway.spi.RouterException when the classifier fails; nothing is kept, the next request is
     *                                         decided afresh
     */
    public RouteDecision route(RoutingInput input) {
        if (input instanceof RoutingInput.Chat chat) {
            ConversationCache.Key key = new ConversationCache.Key(modelId, chat.opening());
            var known = conversations.get(key);
            if (known.isPresent()) {
                return known.get();
            }
            RouteDecision fresh = decide(input.state());
            RouteDecision kept = conversations.putIfAbsent(key, fresh);
            if (kept == fresh) {
                logged(fresh);
            }
            return kept;
        }
        return logged(decide(input.state()));
    }

    /** The class of a state: long documents by length, the rest by the classifier. */
    public Classification classify(String state) {
        if (state.getBytes(StandardCharsets.UTF_8).length >= LONG_DOC_BYTES) {
            return new Classification(RequestClass.LONG_DOC, 1.0);
        }
        return classifier.classify(state);
    }

    /** The devices requests may run on, the route's own first. */
    public List<String> candidates() {
        return candidates;
    }

    public RoutePolicy policy() {
        return policy;
    }

    /** Conversations whose decision is kept. */
    public int conversations() {
        return conversations.size();
    }

    @Override
    public void close() {
        classifier.close();
    }

    private RouteDecision decide(String state) {
        Classification c = classify(state);
        return new RouteDecision(c.requestClass().wireName(), c.confidence(),
                DecisionRule.device(c, policy, candidates));
    }

    private RouteDecision logged(RouteDecision decision) {
        log.accept("laya: " + decision.describe());
        return decision;
    }
}
