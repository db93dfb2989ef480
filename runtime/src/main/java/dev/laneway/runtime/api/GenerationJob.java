package dev.laneway.runtime.api;

import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.ServedModel;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One request's generations, run on a scheduler thread one choice after another. Errors become typed replies and
 * never escape; a cancelled job stops at the model's next step.
 */
final class GenerationJob implements Runnable {
    private static final Logger LOG = Logger.getLogger(GenerationJob.class);

    private final ServedModel model;
    private final Optional<RouteDecision> route;
    private final List<ChoicePlan> plans;
    private final int promptTokens;
    private final GenerationParams params;
    private final ReplySink reply;
    private final Consumer<GenerationResult> onGeneration;
    private final AtomicBoolean cancelled = new AtomicBoolean();

    /**
     * @param route        where the request runs, when the model routes requests
     * @param promptTokens the request's prompt tokens, each prompt counted once
     * @param onGeneration told of every finished generation (metrics)
     */
    GenerationJob(ServedModel model, Optional<RouteDecision> route, List<ChoicePlan> plans, int promptTokens,
                  GenerationParams params, ReplySink reply, Consumer<GenerationResult> onGeneration) {
        this.model = model;
        this.route = route;
        this.plans = List.copyOf(plans);
        this.promptTokens = promptTokens;
        this.params = params;
        this.reply = reply;
        this.onGeneration = onGeneration;
    }

    /** Asks the job to stop: a queued job does nothing, a running one stops at the next token. */
    void cancel() {
        cancelled.set(true);
    }

    boolean cancelled() {
        return cancelled.get();
    }

    @Override
    public void run() {
        try {
            List<ChoiceOutcome> outcomes = new ArrayList<>();
            StopStrings stops = new StopStrings(params.stops());
            for (int i = 0; i < plans.size() && !cancelled.get(); i++) {
                ChoicePlan plan = plans.get(i);
                reply.choiceStarted(plan.index());
                ChoiceRun run = new ChoiceRun(model, stops, params.wantsLogprobs(),
                        (text, logprobs) -> reply.text(plan.index(), text, logprobs), cancelled::get);
                GenerationRequest request = new GenerationRequest(plan.prompt(), plan.maxTokens(), plan.sampling(),
                        params.topLogprobs(), params.ignoreEos());
                GenerationResult result = route.isPresent() ? model.generate(request, route.get(), run)
                        : model.generate(request, run);
                onGeneration.accept(result);
                ChoiceOutcome outcome = run.finish(plan.index(), result);
                outcomes.add(outcome);
                boolean last = i == plans.size() - 1;
                reply.choiceFinished(outcome, last, last ? Timings.of(outcomes) : null);
            }
            if (!cancelled.get()) {
                reply.completed(outcomes, Usage.of(promptTokens, outcomes), Timings.of(outcomes));
            }
        } catch (InvalidRequestException e) {
            reply.failed(ApiException.invalidValue(e.param(), e.getMessage()));
        } catch (DeviceFaultException e) {
            LOG.warnf("generation failed on device %s: %s", e.device(), e.getMessage());
            reply.failed(ApiException.deviceFault("the device " + e.device() + " failed this generation: "
                    + e.getMessage()));
        } catch (RuntimeException e) {
            LOG.error("generation failed", e);
            reply.failed(ApiException.internal());
        }
    }
}
