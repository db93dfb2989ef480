package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;

/**
 * Writes a request's output as server-sent events: {@code data: {json}\n\n} per chunk, then {@code data: [DONE]}
 * (or, for a format that streams newline-delimited JSON, a line per chunk).
 * A failure ends the stream with one {@code data: {"error":...}} event and no {@code [DONE]}. Asked for, every chunk of
 * text carries the choice's running {@code timings}, and the prompt's progress comes as chunks of its own with
 * {@code prompt_progress}, as llama-server streams them.
 */
final class StreamReply implements ReplySink {
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = frame("[DONE]".getBytes(StandardCharsets.US_ASCII));

    private final ReplyFormat format;
    /** Whether each chunk is a line of newline-delimited JSON rather than a server-sent event. */
    private final boolean lines;
    private final Flow.Subscriber<byte[]> out;
    private final boolean includeUsage;
    private final boolean timingsPerToken;
    private final boolean returnProgress;
    private final ObjectMapper mapper;
    private final Map<Integer, ChoiceClock> clocks = new HashMap<>();

    StreamReply(ReplyFormat format, Flow.Subscriber<byte[]> out, GenerationParams params, ObjectMapper mapper) {
        this.format = format;
        this.lines = format.streamType().equals(HttpReply.NDJSON);
        this.out = out;
        this.includeUsage = params.includeUsage();
        this.timingsPerToken = params.timingsPerToken();
        this.returnProgress = params.returnProgress();
        this.mapper = mapper;
    }

    @Override
    public void choiceStarted(int index, ChoiceClock clock) {
        clocks.put(index, clock);
        format.opening(index).ifPresent(this::send);
    }

    @Override
    public void progress(int index) {
        if (returnProgress) {
            ObjectNode fields = mapper.createObjectNode();
            fields.set("prompt_progress", mapper.valueToTree(clocks.get(index).progress()));
            send(timed(index, withFields(format.progress(index), fields)));
        }
    }

    @Override
    public void text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        send(timed(index, format.text(index, text, tokens, logprobs)));
    }

    @Override
    public void reasoning(int index, String text, List<TokenLogprob> logprobs) {
        send(timed(index, format.reasoning(index, text, logprobs)));
    }

    /** The chunk with the choice's running timings, when the request asked for them on every chunk. */
    private Object timed(int index, Object chunk) {
        if (!timingsPerToken) {
            return chunk;
        }
        ObjectNode fields = mapper.createObjectNode();
        fields.set("timings", mapper.valueToTree(clocks.get(index).timings()));
        return withFields(chunk, fields);
    }

    /** The chunk with {@code fields} added: to its last event's data when it is several events. */
    private Object withFields(Object chunk, ObjectNode fields) {
        if (chunk instanceof SseEvents events) {
            List<SseEvents.Event> list = new ArrayList<>(events.events());
            if (list.isEmpty()) {
                return chunk;
            }
            SseEvents.Event last = list.remove(list.size() - 1);
            list.add(new SseEvents.Event(last.name(), withFields(last.data(), fields)));
            return new SseEvents(list);
        }
        ObjectNode node = mapper.valueToTree(chunk);
        node.setAll(fields);
        return node;
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
        if (format.endsWithDone()) {
            out.onNext(DONE);
        }
        out.onComplete();
    }

    @Override
    public void failed(ApiException error) {
        send(format.error(error));
        out.onComplete();
    }

    private void send(Object chunk) {
        if (lines) {
            byte[] json = HttpReply.write(chunk, mapper);
            byte[] line = java.util.Arrays.copyOf(json, json.length + 1);
            line[json.length] = '\n';
            out.onNext(line);
            return;
        }
        if (chunk instanceof SseEvents events) {
            for (SseEvents.Event e : events.events()) {
                out.onNext(named(e.name(), HttpReply.write(e.data(), mapper)));
            }
            return;
        }
        out.onNext(frame(HttpReply.write(chunk, mapper)));
    }

    /** A named event: {@code event: NAME}, then the data as {@link #frame}. */
    static byte[] named(String name, byte[] data) {
        byte[] event = ("event: " + name + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] frame = frame(data);
        byte[] out = new byte[event.length + frame.length];
        System.arraycopy(event, 0, out, 0, event.length);
        System.arraycopy(frame, 0, out, event.length, frame.length);
        return out;
    }

    /** One event: {@code data: }, the payload (one line: JSON escapes every newline), a blank line. */
    static byte[] frame(byte[] data) {
        byte[] frame = new byte[DATA.length + data.length + END.length];
        System.arraycopy(DATA, 0, frame, 0, DATA.length);
        System.arraycopy(data, 0, frame, DATA.length, data.length);
        System.arraycopy(END, 0, frame, DATA.length + data.length, END.length);
        return frame;
    }
}
