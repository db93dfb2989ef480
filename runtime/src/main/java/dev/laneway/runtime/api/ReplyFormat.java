package dev.laneway.runtime.api;

import java.util.List;
import java.util.Optional;

/** How an endpoint spells its responses and stream chunks; one instance per request. */
interface ReplyFormat {

    /**
     * The Content-Type of a stream: server-sent events, or Ollama's newline-delimited JSON ({@link HttpReply#NDJSON}),
     * each chunk a line.
     */
    default String streamType() {
        return HttpReply.EVENT_STREAM;
    }

    /** Whether a stream ends with {@code data: [DONE]} (OpenAI's streams do). */
    default boolean endsWithDone() {
        return true;
    }

    /** The chunk that opens a streamed choice, if the endpoint has one (chat: the role). */
    Optional<Object> opening(int index);

    /** The chunk that carries a choice's prompt progress (the reply adds the progress to it). */
    Object progress(int index);

    /** A chunk of text, with the tokens that made it. */
    Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs);

    /** A chunk of reasoning; only chat answers have it. */
    default Object reasoning(int index, String text, List<TokenLogprob> logprobs) {
        throw new IllegalStateException("this endpoint's answers have no reasoning");
    }

    /** The chunk that ends a streamed choice, with its finish_reason; timings ride on the last one. */
    Object closing(ChoiceOutcome outcome, Timings timings);

    /** The {@code stream_options.include_usage} chunk: no choices, the usage. */
    Object usage(Usage usage, Timings timings);

    /** What a stream ends with when the request fails on the way: the error body. */
    default Object error(ApiException error) {
        return error.body();
    }

    /** The whole response of a request that was not streamed. */
    Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings);
}
