package dev.laneway.runtime.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Ollama's answers to {@code /api/chat} and {@code /api/generate}: streamed as newline-delimited JSON, a line per
 * piece of text ({@code message.content} or {@code response}; {@code thinking} for reasoning), then a last line with
 * {@code done: true}, the {@code done_reason} and the counts and nanosecond durations Ollama reports; not streamed,
 * that last object with the whole text. Tool calls come on the last line, their arguments as objects.
 */
final class OllamaFormat implements ReplyFormat {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String model;
    private final boolean chat;
    private final long started = System.nanoTime();

    /** @param chat whether the answer is a chat's ({@code message}) rather than a generation's ({@code response}) */
    OllamaFormat(String model, boolean chat) {
        this.model = model;
        this.chat = chat;
    }

    @Override
    public boolean endsWithDone() {
        return false;
    }

    @Override
    public String streamType() {
        return HttpReply.NDJSON;
    }

    @Override
    public Optional<Object> opening(int index) {
        return Optional.empty();
    }

    @Override
    public Object progress(int index) {
        return piece("", null);
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        return piece(text, null);
    }

    @Override
    public Object reasoning(int index, String text, List<TokenLogprob> logprobs) {
        return piece("", text);
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        return done(outcome, "", null);
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        return piece("", null);
    }

    @Override
    public Object error(ApiException error) {
        return Map.of("error", error.getMessage());
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        ChoiceOutcome outcome = outcomes.get(0);
        return done(outcome, outcome.text() == null ? "" : outcome.text(), outcome.reasoning());
    }

    /** A line that carries text or thinking. */
    private ObjectNode piece(String text, String thinking) {
        ObjectNode line = head();
        if (chat) {
            ObjectNode message = line.putObject("message").put("role", "assistant").put("content", text);
            if (thinking != null) {
                message.put("thinking", thinking);
            }
        } else {
            line.put("response", text);
            if (thinking != null) {
                line.put("thinking", thinking);
            }
        }
        line.put("done", false);
        return line;
    }

    /** The last line: the rest of the text (all of it, not streamed), tool calls, why it ended, counts and times. */
    private ObjectNode done(ChoiceOutcome outcome, String text, String thinking) {
        ObjectNode line = piece(text, thinking == null || thinking.isEmpty() ? null : thinking);
        if (chat && !outcome.toolCalls().isEmpty()) {
            ArrayNode calls = ((ObjectNode) line.get("message")).putArray("tool_calls");
            for (ToolCallFormat.Call call : outcome.toolCalls()) {
                ObjectNode function = calls.addObject().putObject("function").put("name", call.name());
                try {
                    function.set("arguments", JSON.readTree(call.arguments()));
                } catch (JsonProcessingException e) {
                    function.put("arguments", call.arguments());
                }
            }
        }
        line.put("done", true);
        line.put("done_reason", "length".equals(outcome.finishReason()) ? "length" : "stop");
        var result = outcome.result();
        line.put("total_duration", System.nanoTime() - started);
        line.put("load_duration", 0);
        line.put("prompt_eval_count", result.promptTokens());
        line.put("prompt_eval_duration", result.promptNanos());
        line.put("eval_count", result.generatedTokens());
        line.put("eval_duration", result.generationNanos());
        return line;
    }

    private ObjectNode head() {
        return JSON.createObjectNode().put("model", model).put("created_at", Instant.now().toString());
    }
}
