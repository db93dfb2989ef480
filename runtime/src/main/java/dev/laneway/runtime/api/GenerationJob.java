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
 * One request's generations, run from a scheduler thread: its choices together where the model can run them at once.
 * Errors become typed replies and never escape; a cancelled job stops at the model's next step.
 */
final class GenerationJob implements Runnable {
    private static final Logger LOG = Logger.getLogger(GenerationJob.class);

    private final ServedModel model;
    private final Optional<RouteDecision> route;
    private final List<ChoicePlan> plans;
    private final int promptTokens;
    private final GenerationParams params;
    private final AnswerReading reading;
    private final ReplySink reply;
    private final Consumer<GenerationResult> onGeneration;
    private final AtomicBoolean cancelled = new AtomicBoolean();

    /**
     * @param route        where the request runs, when the model routes requests
     * @param promptTokens the request's prompt tokens, each prompt counted once
     * @param reading      how the answers' text is read back (tool calls, reasoning)
     * @param onGeneration told of every finished generation (metrics)
     */
    GenerationJob(ServedModel model, Optional<RouteDecision> route, List<ChoicePlan> plans, int promptTokens,
                  GenerationParams params, AnswerReading reading, ReplySink reply,
                  Consumer<GenerationResult> onGeneration) {
        this.model = model;
        this.route = route;
        this.plans = List.copyOf(plans);
        this.promptTokens = promptTokens;
        this.params = params;
        this.reading = reading;
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

    /** The choices together (they share their prompt and decode in one batch), or in turn where a router decided. */
    private List<GenerationResult> generate(List<GenerationRequest> requests, List<ChoiceRun> runs) {
        if (route.isEmpty()) {
            return model.generateAll(requests, runs);
        }
        List<GenerationResult> results = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            results.add(model.generate(requests.get(i), route.get(), runs.get(i)));
        }
        return results;
    }

    @Override
    public void run() {
        try {
            if (cancelled.get()) {
                return;
            }
            StopStrings stops = new StopStrings(params.stops());
            List<ChoiceRun> runs = new ArrayList<>();
            List<AnswerStream> answers = new ArrayList<>();
            List<GenerationRequest> requests = new ArrayList<>();
            for (ChoicePlan plan : plans) {
                reply.choiceStarted(plan.index());
                AnswerStream answer = new AnswerStream(plan.index(), reading, reply);
                answers.add(answer);
                runs.add(new ChoiceRun(model, stops, params.wantsLogprobs(), answer, cancelled::get));
                requests.add(new GenerationRequest(plan.prompt(), plan.maxTokens(), plan.sampling(),
                        params.topLogprobs(), params.ignoreEos(), params.grammar()));
            }
            List<GenerationResult> results = generate(requests, runs);
            List<ChoiceOutcome> outcomes = new ArrayList<>();
            for (int i = 0; i < plans.size(); i++) {
                onGeneration.accept(results.get(i));
                ChoiceOutcome outcome = answers.get(i).finish(runs.get(i).finish(plans.get(i).index(),
                        results.get(i)));
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
