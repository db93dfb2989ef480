package dev.laneway.runtime.api;

import dev.laneway.runtime.api.ChatWire.ChatChunk;
import dev.laneway.runtime.api.ChatWire.ChatCompletion;
import dev.laneway.runtime.api.ChatWire.Choice;
import dev.laneway.runtime.api.ChatWire.ChunkChoice;
import dev.laneway.runtime.api.ChatWire.Delta;
import dev.laneway.runtime.api.ChatWire.Opening;
import dev.laneway.runtime.api.ChatWire.Logprobs;
import dev.laneway.runtime.api.ChatWire.Message;

import java.util.List;
import java.util.Optional;

/** {@code /v1/chat/completions}: {@code chat.completion}, streamed as {@code chat.completion.chunk}s. */
final class ChatFormat implements ReplyFormat {
    static final String OBJECT = "chat.completion";
    static final String CHUNK_OBJECT = "chat.completion.chunk";
    private static final String ROLE = "assistant";

    private final ReplyHeader header;
    private final boolean logprobs;

    ChatFormat(ReplyHeader header, boolean logprobs) {
        this.header = header;
        this.logprobs = logprobs;
    }

    @Override
    public Optional<Object> opening(int index) {
        return Optional.of(chunk(List.of(new ChunkChoice(index, new Opening(ROLE, null), null, null)), null, null));
    }

    @Override
    public Object progress(int index) {
        return chunk(List.of(new ChunkChoice(index, new Opening(ROLE, null), null, null)), null, null);
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> entries) {
        return chunk(List.of(new ChunkChoice(index, new Delta(text, null, null), Logprobs.of(entries, logprobs), null)),
                null, null);
    }

    @Override
    public Object reasoning(int index, String text, List<TokenLogprob> entries) {
        return chunk(List.of(new ChunkChoice(index, new Delta(null, text, null), Logprobs.of(entries, logprobs),
                null)), null, null);
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        Delta delta = new Delta(null, null, outcome.toolCalls().isEmpty() ? null
                : toolCalls(outcome, true));
        return chunk(List.of(new ChunkChoice(outcome.index(), delta, null, outcome.finishReason())), null, timings);
    }

    /** The outcome's tool calls as OpenAI writes them, each with a fresh id; indexed when streamed. */
    private static List<ChatWire.ToolCall> toolCalls(ChoiceOutcome outcome, boolean indexed) {
        List<ChatWire.ToolCall> calls = new java.util.ArrayList<>();
        for (int i = 0; i < outcome.toolCalls().size(); i++) {
            ToolCallFormat.Call call = outcome.toolCalls().get(i);
            calls.add(new ChatWire.ToolCall(indexed ? i : null, "call_" + java.util.UUID.randomUUID().toString()
                    .replace("-", "").substring(0, 24), "function", new ChatWire.Function(call.name(),
                    call.arguments())));
        }
        return calls;
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        return chunk(List.of(), usage, timings);
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        List<Choice> choices = outcomes.stream()
                .map(o -> new Choice(o.index(), new Message(ROLE, o.text(), o.reasoning(), toolCalls(o, false)),
                        Logprobs.of(o.logprobs(), logprobs), o.finishReason()))
                .toList();
        return new ChatCompletion(header.id(), OBJECT, header.created(), header.model(), header.systemFingerprint(),
                choices, usage, timings);
    }

    private ChatChunk chunk(List<ChunkChoice> choices, Usage usage, Timings timings) {
        return new ChatChunk(header.id(), CHUNK_OBJECT, header.created(), header.model(), header.systemFingerprint(),
                choices, usage, timings);
    }
}
