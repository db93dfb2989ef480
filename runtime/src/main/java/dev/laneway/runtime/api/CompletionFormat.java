package dev.laneway.runtime.api;

import dev.laneway.runtime.api.CompletionWire.Choice;
import dev.laneway.runtime.api.CompletionWire.Logprobs;
import dev.laneway.runtime.api.CompletionWire.TextCompletion;

import java.util.List;
import java.util.Optional;

/** {@code /v1/completions}: objects of type {@code text_completion}, streamed or not. */
final class CompletionFormat implements ReplyFormat {
    static final String OBJECT = "text_completion";

    private final ReplyHeader header;
    private final boolean logprobs;

    CompletionFormat(ReplyHeader header, boolean logprobs) {
        this.header = header;
        this.logprobs = logprobs;
    }

    @Override
    public Optional<Object> opening(int index) {
        return Optional.empty();
    }

    @Override
    public Object progress(int index) {
        return completion(List.of(new Choice("", index, null, null)), null, null);
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> entries) {
        return completion(List.of(new Choice(text, index, Logprobs.of(entries, logprobs), null)), null, null);
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        return completion(List.of(new Choice("", outcome.index(), null, outcome.finishReason())), null, timings);
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        return completion(List.of(), usage, timings);
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        List<Choice> choices = outcomes.stream()
                .map(o -> new Choice(o.text(), o.index(), Logprobs.of(o.logprobs(), logprobs), o.finishReason()))
                .toList();
        return completion(choices, usage, timings);
    }

    private TextCompletion completion(List<Choice> choices, Usage usage, Timings timings) {
        return new TextCompletion(header.id(), OBJECT, header.created(), header.model(), header.systemFingerprint(),
                choices, usage, timings);
    }
}
