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
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One request's generations: started from the HTTP thread that admitted it, run by the served model's engine loop
 * (its choices together as far as streams are free), finished where they end. Errors become typed replies and never
 * escape; a cancelled job never starts, or stops at the model's next step.
 */
final class GenerationJob implements Admission.Job {
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
    /** Why the server ended the job, when it did; its client is told that instead of the answer. */
    private volatile ApiException endedBy;

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

    @Override
    public java.util.List<String> adapters() {
        return params.adapters().stream().map(dev.laneway.spi.AdapterUse::name).toList();
    }

    @Override
    public ServedModel model() {
        return model;
    }

    @Override
    public void cancel() {
        cancelled.set(true);
    }

    @Override
    public void end(ApiException why) {
        endedBy = why;
        cancelled.set(true);
    }

    /** Hands the choices to the model and returns; {@code onEnd} runs once the job has ended, whatever the outcome. */
    @Override
    public void start(Runnable onEnd) {
        StopStrings stops = new StopStrings(params.stops());
        List<ChoiceRun> runs = new ArrayList<>();
        List<AnswerStream> answers = new ArrayList<>();
        List<GenerationRequest> requests = new ArrayList<>();
        for (ChoicePlan plan : plans) {
            ChoiceClock clock = new ChoiceClock();
            reply.choiceStarted(plan.index(), clock);
            AnswerStream answer = new AnswerStream(plan.index(), reading, reply);
            answers.add(answer);
            runs.add(new ChoiceRun(model, stops, params.wantsLogprobs(), answer, cancelled::get, clock));
            requests.add(new GenerationRequest(plan.prompt(), plan.maxTokens(), plan.sampling(),
                    params.topLogprobs(), params.ignoreEos(), params.grammar(), params.cachePrompt(), params.slot(),
                    params.postSampling(), params.cacheSalt(), plan.shiftKeep(), params.adapters()));
        }
        CompletableFuture<List<GenerationResult>> done;
        try {
            done = model.submit(requests, route, runs);
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((results, error) -> {
            try {
                finish(results, error, answers, runs);
            } finally {
                onEnd.run();
            }
        });
    }

    private void finish(List<GenerationResult> results, Throwable error, List<AnswerStream> answers,
                        List<ChoiceRun> runs) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                ? c.getCause() : error;
        if (endedBy != null) {
            reply.failed(endedBy);
            return;
        }
        try {
            if (cause instanceof RuntimeException e) {
                throw e;
            }
            if (cause != null) {
                throw new IllegalStateException(cause);
            }
            if (cancelled.get() || results.contains(null)) {
                return;
            }
            List<ChoiceOutcome> outcomes = new ArrayList<>();
            for (int i = 0; i < plans.size(); i++) {
                onGeneration.accept(results.get(i));
                ChoiceOutcome outcome = answers.get(i).finish(runs.get(i).finish(plans.get(i).index(),
                        results.get(i)));
                outcomes.add(outcome);
                boolean last = i == plans.size() - 1;
                reply.choiceFinished(outcome, last, last ? Timings.of(outcomes) : null);
            }
            reply.completed(outcomes, Usage.of(promptTokens, outcomes), Timings.of(outcomes));
        } catch (InvalidRequestException e) {
            reply.failed(ApiException.invalidValue(e.param(), e.getMessage()));
        } catch (DeviceFaultException e) {
            LOG.warnf("generation failed on device %s: %s", e.device(), e.getMessage());
            reply.failed(ApiException.deviceFault(e, "this generation"));
        } catch (RuntimeException e) {
            if (cancelled.get()) {
                return;  // the client has gone: nobody to tell, and the model closed under it at shutdown
            }
            LOG.error("generation failed", e);
            reply.failed(ApiException.internal());
        }
    }
}
