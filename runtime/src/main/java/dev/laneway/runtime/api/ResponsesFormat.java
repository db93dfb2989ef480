package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * OpenAI's Responses answer: a {@code response} whose output items are the reasoning, the message and the function
 * calls; streamed as OpenAI streams it ({@code response.created}, each item's {@code output_item.added}, its parts and
 * deltas and {@code .done} events, then {@code response.completed}), every event numbered. One per request: it keeps
 * the open item of the stream.
 */
final class ResponsesFormat implements ReplyFormat {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final String id = "resp_" + token();
    private final long created = System.currentTimeMillis() / 1000;
    private final String model;
    private final GenerationParams params;
    private final int promptTokens;
    private int sequence;
    /** The stream's open item: {@code reasoning} or {@code message}, or null; its id, index and text so far. */
    private String open;
    private String openId;
    private final StringBuilder openText = new StringBuilder();
    private final ArrayNode items = NODES.arrayNode();

    ResponsesFormat(String model, GenerationParams params, int promptTokens) {
        this.model = model;
        this.params = params;
        this.promptTokens = promptTokens;
    }

    @Override
    public boolean endsWithDone() {
        return false;
    }

    @Override
    public Optional<Object> opening(int index) {
        SseEvents.Builder events = new SseEvents.Builder();
        event(events, "response.created").set("response", response("in_progress", NODES.arrayNode(), null, null));
        event(events, "response.in_progress").set("response", response("in_progress", NODES.arrayNode(), null, null));
        return Optional.of(events.build());
    }

    @Override
    public Object progress(int index) {
        SseEvents.Builder events = new SseEvents.Builder();
        event(events, "response.in_progress").set("response", response("in_progress", NODES.arrayNode(), null, null));
        return events.build();
    }

    @Override
    public Object text(int index, String text, int[] tokens, List<TokenLogprob> logprobs) {
        SseEvents.Builder events = new SseEvents.Builder();
        if (!text.isEmpty()) {
            open(events, "message");
            event(events, "response.output_text.delta").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).put("delta", text).putArray("logprobs");
            openText.append(text);
        }
        return events.build();
    }

    @Override
    public Object reasoning(int index, String text, List<TokenLogprob> logprobs) {
        SseEvents.Builder events = new SseEvents.Builder();
        if (!text.isEmpty()) {
            open(events, "reasoning");
            event(events, "response.reasoning_text.delta").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).put("delta", text);
            openText.append(text);
        }
        return events.build();
    }

    /** Opens an item of {@code type} (closing another first). */
    private void open(SseEvents.Builder events, String type) {
        if (type.equals(open)) {
            return;
        }
        close(events);
        open = type;
        openText.setLength(0);
        ObjectNode item;
        if (type.equals("message")) {
            openId = "msg_" + token();
            item = message(openId, "in_progress", "");
            item.set("content", NODES.arrayNode());
        } else {
            openId = "rs_" + token();
            item = reasoningItem(openId, "");
            item.set("content", NODES.arrayNode());
        }
        event(events, "response.output_item.added").put("output_index", items.size()).set("item", item);
        if (type.equals("message")) {
            event(events, "response.content_part.added").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).set("part", outputText(""));
        }
    }

    private void close(SseEvents.Builder events) {
        if (open == null) {
            return;
        }
        String text = openText.toString();
        ObjectNode item;
        if (open.equals("message")) {
            event(events, "response.output_text.done").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).put("text", text).putArray("logprobs");
            event(events, "response.content_part.done").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).set("part", outputText(text));
            item = message(openId, "completed", text);
        } else {
            event(events, "response.reasoning_text.done").put("item_id", openId).put("output_index", items.size())
                    .put("content_index", 0).put("text", text);
            item = reasoningItem(openId, text);
        }
        event(events, "response.output_item.done").put("output_index", items.size()).set("item", item);
        items.add(item);
        open = null;
    }

    @Override
    public Object closing(ChoiceOutcome outcome, Timings timings) {
        SseEvents.Builder events = new SseEvents.Builder();
        close(events);
        for (ToolCallFormat.Call call : outcome.toolCalls()) {
            ObjectNode added = functionCall(call, "in_progress");
            added.put("arguments", "");
            event(events, "response.output_item.added").put("output_index", items.size()).set("item", added);
            String itemId = added.get("id").asText();
            event(events, "response.function_call_arguments.delta").put("item_id", itemId)
                    .put("output_index", items.size()).put("delta", call.arguments());
            event(events, "response.function_call_arguments.done").put("item_id", itemId)
                    .put("output_index", items.size()).put("arguments", call.arguments());
            ObjectNode done = added.deepCopy().put("arguments", call.arguments()).put("status", "completed");
            event(events, "response.output_item.done").put("output_index", items.size()).set("item", done);
            items.add(done);
        }
        ObjectNode completed = event(events, "response.completed");
        completed.set("response", response(status(outcome), items, incomplete(outcome),
                usage(outcome.result().cachedTokens(), outcome.result().generatedTokens(), outcome.reasoning())));
        if (timings != null) {
            completed.putPOJO("timings", timings);
        }
        return events.build();
    }

    @Override
    public Object usage(Usage usage, Timings timings) {
        throw new IllegalStateException("a Responses stream carries its usage in response.completed");
    }

    @Override
    public Object error(ApiException error) {
        ObjectNode failed = NODES.objectNode().put("type", "error").put("sequence_number", sequence++);
        failed.put("code", error.body().error().code()).put("message", error.getMessage()).putNull("param");
        return new SseEvents.Builder().add("error", failed).build();
    }

    @Override
    public Object response(List<ChoiceOutcome> outcomes, Usage usage, Timings timings) {
        ChoiceOutcome o = outcomes.get(0);
        ArrayNode output = NODES.arrayNode();
        if (o.reasoning() != null) {
            output.add(reasoningItem("rs_" + token(), o.reasoning()));
        }
        if ((o.text() != null && !o.text().isEmpty()) || o.toolCalls().isEmpty()) {
            output.add(message("msg_" + token(), "completed", o.text() == null ? "" : o.text()));
        }
        for (ToolCallFormat.Call call : o.toolCalls()) {
            output.add(functionCall(call, "completed"));
        }
        return response(status(o), output, incomplete(o), usage(usage.promptTokensDetails().cachedTokens(),
                usage.completionTokens(), o.reasoning()));
    }

    private ObjectNode response(String status, ArrayNode output, ObjectNode incomplete, ObjectNode usage) {
        ObjectNode r = NODES.objectNode().put("id", id).put("object", "response").put("created_at", created)
                .put("status", status).put("model", model);
        r.putNull("error");
        r.set("incomplete_details", incomplete);
        r.set("output", output);
        StringBuilder text = new StringBuilder();
        output.forEach(item -> item.path("content").forEach(part -> {
            if (part.path("type").asText().equals("output_text")) {
                text.append(part.path("text").asText());
            }
        }));
        r.put("output_text", text.toString());
        r.put("parallel_tool_calls", true).put("temperature", params.temperature()).put("top_p", params.topP());
        if (params.maxTokens().isPresent()) {
            r.put("max_output_tokens", params.maxTokens().getAsInt());
        } else {
            r.putNull("max_output_tokens");
        }
        r.put("store", false).put("truncation", "disabled");
        r.putNull("previous_response_id");
        r.putObject("text").putObject("format").put("type", "text");
        r.putArray("tools");
        r.put("tool_choice", "auto");
        r.putObject("metadata");
        r.set("usage", usage);
        return r;
    }

    private ObjectNode usage(int cached, int output, String reasoning) {
        ObjectNode usage = NODES.objectNode().put("input_tokens", promptTokens);
        usage.putObject("input_tokens_details").put("cached_tokens", cached);
        usage.put("output_tokens", output);
        usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
        usage.put("total_tokens", promptTokens + output);
        return usage;
    }

    private static String status(ChoiceOutcome o) {
        return o.ending().type().equals("limit") && o.toolCalls().isEmpty() ? "incomplete" : "completed";
    }

    private static ObjectNode incomplete(ChoiceOutcome o) {
        return status(o).equals("incomplete") ? NODES.objectNode().put("reason", "max_output_tokens") : null;
    }

    private static ObjectNode message(String id, String status, String text) {
        ObjectNode item = NODES.objectNode().put("id", id).put("type", "message").put("status", status)
                .put("role", "assistant");
        item.putArray("content").add(outputText(text));
        return item;
    }

    private static ObjectNode outputText(String text) {
        ObjectNode part = NODES.objectNode().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        part.putArray("logprobs");
        return part;
    }

    private static ObjectNode reasoningItem(String id, String text) {
        ObjectNode item = NODES.objectNode().put("id", id).put("type", "reasoning");
        item.putArray("summary");
        item.putArray("content").addObject().put("type", "reasoning_text").put("text", text);
        return item;
    }

    private static ObjectNode functionCall(ToolCallFormat.Call call, String status) {
        return NODES.objectNode().put("id", "fc_" + token()).put("type", "function_call").put("status", status)
                .put("call_id", "call_" + token()).put("name", call.name()).put("arguments", call.arguments());
    }

    private ObjectNode event(SseEvents.Builder events, String type) {
        ObjectNode data = NODES.objectNode().put("type", type).put("sequence_number", sequence++);
        events.add(type, data);
        return data;
    }

    private static String token() {
        byte[] bytes = new byte[12];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
