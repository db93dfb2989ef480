package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Gathers a request's output into one JSON response. */
final class CollectedReply implements ReplySink {
    private final ReplyFormat format;
    private final CompletableFuture<HttpReply> reply;
    private final ObjectMapper mapper;

    CollectedReply(ReplyFormat format, CompletableFuture<HttpReply> reply, ObjectMapper mapper) {
        this.format = format;
        this.reply = reply;
        this.mapper = mapper;
    }

    @Override
    public void choiceStarted(int index, ChoiceClock clock) {
    }

    @Override
    public void progress(int index) {
        // A whole answer reports its prompt's work once, in its timings.
    }

    @Override
    public void text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
    }

    @Override
    public void reasoning(int index, String text, List<TokenLogprob> logprobs) {
    }

    @Override
    public void choiceFinished(ChoiceOutcome outcome, boolean last, Timings timingsSoFar) {
    }

    @Override
    public void completed(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        reply.complete(HttpReply.json(200, format.response(outcomes, usage, timings), mapper));
    }

    @Override
    public void failed(ApiException error) {
        reply.complete(HttpReply.error(error, format.error(error), mapper));
    }
}
