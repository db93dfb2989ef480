package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Flow;

/**
 * Writes a request's output as server-sent events: {@code data: {json}\n\n} per chunk, then {@code data: [DONE]}.
 * A failure ends the stream with one {@code data: {"error":...}} event and no {@code [DONE]}.
 */
final class StreamReply implements ReplySink {
    static final byte[] DONE = frame("[DONE]");

    private final ReplyFormat format;
    private final Flow.Subscriber<byte[]> out;
    private final boolean includeUsage;
    private final ObjectMapper mapper;

    StreamReply(ReplyFormat format, Flow.Subscriber<byte[]> out, boolean includeUsage, ObjectMapper mapper) {
        this.format = format;
        this.out = out;
        this.includeUsage = includeUsage;
        this.mapper = mapper;
    }

    @Override
    public void choiceStarted(int index) {
        format.opening(index).ifPresent(this::send);
    }

    @Override
    public void text(int index, String text, List<TokenLogprob> logprobs) {
        send(format.text(index, text, logprobs));
    }

    @Override
    public void choiceFinished(ChoiceOutcome outcome, boolean last, Timings timingsSoFar) {
        send(format.closing(outcome, last ? timingsSoFar : null));
    }

    @Override
    public void completed(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        if (includeUsage) {
            send(format.usage(usage, timings));
        }
        out.onNext(DONE);
        out.onComplete();
    }

    @Override
    public void failed(ApiException error) {
        send(error.body());
        out.onComplete();
    }

    private void send(Object chunk) {
        out.onNext(frame(new String(HttpReply.write(chunk, mapper), StandardCharsets.UTF_8)));
    }

    static byte[] frame(String data) {
        return ("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8);
    }
}
