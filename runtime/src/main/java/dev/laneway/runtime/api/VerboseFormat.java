package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Optional;

/**
 * {@code serve --verbose}: an OpenAI answer that also carries llama-server's {@code __verbose}, the {@code /completion}
 * object of its first choice (the prompt as the model read it, the sampling used, how it stopped), for seeing what a
 * chat template made of a conversation. Streamed chunks are the wrapped format's own.
 */
final class VerboseFormat implements ReplyFormat {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ReplyFormat format;
    private final NativeCompletionFormat verbose;

    VerboseFormat(ReplyFormat format, NativeCompletionFormat verbose) {
        this.format = format;
        this.verbose = verbose;
    }

    @Override
    public boolean endsWithDone() {
        return format.endsWithDone();
    }

    @Override
    public Optional<Object> opening(int index) {
        return format.opening(index);
    }

    @Override
    public Object progress(int index) {
        return format.progress(index);
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        return format.text(index, text, tokens, logprobs);
    }

    @Override
    public Object reasoning(int index, String text, List<TokenLogprob> logprobs) {
        return format.reasoning(index, text, logprobs);
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        return format.closing(outcome, timings);
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        return format.usage(usage, timings);
    }

    @Override
    public Object error(ApiException error) {
        return format.error(error);
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        ObjectNode answer = JSON.valueToTree(format.response(outcomes, usage, timings));
        answer.set("__verbose", JSON.valueToTree(verbose.response(outcomes.subList(0, 1), usage, timings)));
        return answer;
    }
}
