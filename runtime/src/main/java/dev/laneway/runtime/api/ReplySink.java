package dev.laneway.runtime.api;

import java.util.List;

/**
 * Where a request's output goes while it is generated: every choice is started, their text comes as it is decided
 * (choices interleaved when they run together), then each choice finishes in order. Calls come one at a time, from the
 * HTTP thread that starts the request, then the model's engine loop, never at once.
 */
interface ReplySink {

    /** A choice begins; {@code clock} keeps its running account while it runs. */
    void choiceStarted(int index, ChoiceClock clock);

    /** The prompt of a choice has been computed further (its clock says how far). */
    void progress(int index);

    /** Text of a choice became final, with the tokens that made it. */
    void text(int index, String text, int[] tokens, List<TokenLogprob> logprobs);

    /** Reasoning of a choice became final (a thinking model's, split off its text). */
    void reasoning(int index, String text, List<TokenLogprob> logprobs);

    /** A choice ended; {@code last} when no other choice follows. */
    void choiceFinished(ChoiceOutcome outcome, boolean last, Timings timingsSoFar);

    /** Every choice ended. */
    void completed(List<ChoiceOutcome> outcomes, Usage usage, Timings timings);

    /** The request failed; nothing more follows. */
    void failed(ApiException error);
}
