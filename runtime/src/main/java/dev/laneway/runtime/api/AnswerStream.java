package dev.laneway.runtime.api;

import java.util.List;

/**
 * One choice's text on its way to the client, read as {@link AnswerReading} says: reasoning split off into its own
 * deltas, text that may be a tool call held back, and at the end the outcome rewritten with both.
 */
final class AnswerStream implements ChoiceRun.Listener {
    private static final int[] NO_TOKENS = new int[0];

    private final int index;
    private final AnswerReading reading;
    private final ReplySink reply;
    private final ReasoningSplit reasoning;
    private final ToolCallHoldBack held;

    AnswerStream(int index, AnswerReading reading, ReplySink reply) {
        this.index = index;
        this.reading = reading;
        this.reply = reply;
        this.reasoning = reading.reasoning() ? new ReasoningSplit(reading.reasoningOpened()) : null;
        this.held = reading.tools().map(t -> new ToolCallHoldBack(t.format())).orElse(null);
    }

    @Override
    public void text(String text, int[] tokens, List<TokenLogprob> logprobs) {
        if (reading.plain()) {
            reply.text(index, text, tokens, logprobs);
            return;
        }
        ReasoningSplit.Parts parts = reasoning != null ? reasoning.accept(text) : new ReasoningSplit.Parts("", text);
        send(parts, tokens, logprobs);
    }

    @Override
    public void progress() {
        reply.progress(index);
    }

    /** Sends the rest and returns the outcome with its reasoning and tool calls read out of its text. */
    ChoiceOutcome finish(ChoiceOutcome outcome) {
        if (reading.plain()) {
            return outcome;
        }
        if (reasoning != null) {
            send(reasoning.finish(), NO_TOKENS, List.of());
            outcome = outcome.withReasoning(reading.reasoningOpened());
        }
        if (reading.tools().isPresent()) {
            outcome = outcome.withToolCalls(reading.tools().get().format(), reading.tools().get().parallel());
            // Without calls the answer is content after all (a generic one: its reply, read out of its JSON).
            if (outcome.toolCalls().isEmpty() && outcome.text().length() > held.sentLength()) {
                reply.text(index, outcome.text().substring(held.sentLength()), NO_TOKENS, List.of());
            }
        }
        return outcome;
    }

    /** Reasoning as its own delta; content through the tool-call hold-back; the logprobs with whichever goes. */
    private void send(ReasoningSplit.Parts parts, int[] tokens, List<TokenLogprob> logprobs) {
        String content = held != null ? held.accept(parts.content()) : parts.content();
        if (!parts.reasoning().isEmpty()) {
            reply.reasoning(index, parts.reasoning(), content.isEmpty() ? logprobs : List.of());
        }
        if (!content.isEmpty()) {
            reply.text(index, content, tokens, logprobs);
        } else if (parts.reasoning().isEmpty() && !logprobs.isEmpty()) {
            reply.text(index, "", tokens, logprobs);
        }
    }
}
