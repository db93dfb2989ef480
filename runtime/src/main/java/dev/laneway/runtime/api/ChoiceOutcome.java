package dev.laneway.runtime.api;

import dev.laneway.spi.GenerationResult;

import java.util.List;

/**
 * How one choice ended.
 *
 * @param index        the choice's index in the response
 * @param text         its text, without a matched stop string; with tool calls, the text before them (or null)
 * @param finishReason {@code stop}, {@code length} or {@code tool_calls}
 * @param logprobs     the reported tokens (empty unless asked)
 * @param result       the model's account: token counts and timings
 * @param toolCalls    the tool calls its text held, when the request offered tools
 * @param reasoning    a thinking model's reasoning, split off the text; null when there is none
 * @param ending       how the generation ended, in llama-server's terms, and its tokens
 */
record ChoiceOutcome(int index, String text, String finishReason, List<TokenLogprob> logprobs,
                     GenerationResult result, List<ToolCallFormat.Call> toolCalls, String reasoning, Ending ending) {

    ChoiceOutcome {
        logprobs = List.copyOf(logprobs);
        toolCalls = List.copyOf(toolCalls);
    }

    ChoiceOutcome(int index, String text, String finishReason, List<TokenLogprob> logprobs, GenerationResult result,
                  Ending ending) {
        this(index, text, finishReason, logprobs, result, List.of(), null, ending);
    }

    /**
     * @param type   llama-server's {@code stop_type}: {@code eos} (the model ended it), {@code limit} (the token
     *               budget or the context), {@code word} (a stop string)
     * @param word   the stop string that ended it; empty otherwise
     * @param tokens every token generated, the end-of-text token excluded
     */
    record Ending(String type, String word, int[] tokens) {
    }

    /** The outcome with its reasoning split off its text ({@code opened}: the prompt opened the think block). */
    ChoiceOutcome withReasoning(boolean opened) {
        ReasoningSplit.Parts parts = ReasoningSplit.split(text, opened);
        return new ChoiceOutcome(index, parts.content(), finishReason, logprobs, result, toolCalls,
                parts.reasoning().isEmpty() ? null : parts.reasoning(), ending);
    }

    /**
     * The outcome with its text read back as {@code format}'s tool calls: when it holds any, the content is the text
     * before them (null when none) and the finish reason {@code tool_calls}; {@code parallel} false keeps the first.
     * Without calls, the content is what the format says the answer replied (for most, the text itself).
     */
    ChoiceOutcome withToolCalls(ToolCallFormat format, boolean parallel) {
        ToolCallFormat.Parsed parsed = format.parse(text);
        if (parsed.calls().isEmpty()) {
            return parsed.content().equals(text) ? this
                    : new ChoiceOutcome(index, parsed.content(), finishReason, logprobs, result, List.of(), reasoning,
                    ending);
        }
        List<ToolCallFormat.Call> calls = parallel ? parsed.calls() : parsed.calls().subList(0, 1);
        return new ChoiceOutcome(index, parsed.content(), finishReason.equals("stop") ? "tool_calls" : finishReason,
                logprobs, result, calls, reasoning, ending);
    }
}
