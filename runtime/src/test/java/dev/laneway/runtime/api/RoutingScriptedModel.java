package dev.laneway.runtime.api;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RouterException;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A test tool: a {@link ScriptedModel} that routes requests as a {@code --laya} model does, by a script in the
 * state: {@code code:} anywhere gives {@code code 0.83 npu}, {@code scorer-fail:} makes the router fail, anything
 * else gives {@code prose 0.50 cpu}. Every decision a generation ran with is put on {@link #RAN_WITH}.
 */
final class RoutingScriptedModel implements ServedModel {
    static final BlockingQueue<RouteDecision> RAN_WITH = new LinkedBlockingQueue<>();
    static final RouteDecision CODE = new RouteDecision("code", 0.83, "npu");
    static final RouteDecision PROSE = new RouteDecision("prose", 0.5, "cpu");

    private final ScriptedModel model = new ScriptedModel();

    @Override
    public Optional<RouteDecision> route(RoutingInput input) {
        String state = input.state();
        if (state.contains("scorer-fail:")) {
            throw new RouterException("laya: the scorer failed on this request: kernel 'matmul' timed out");
        }
        return Optional.of(state.contains("code:") ? CODE : PROSE);
    }

    @Override
    public GenerationResult generate(GenerationRequest request, RouteDecision decision, TokenSink sink) {
        RAN_WITH.add(decision);
        return model.generate(request, sink);
    }

    @Override
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        throw new AssertionError("a routed model is always given its decision by the server");
    }

    @Override
    public String id() {
        return model.id();
    }

    @Override
    public ModelInfo info() {
        return model.info();
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        return model.tokenize(text, addSpecial, parseSpecial);
    }

    @Override
    public String detokenize(int[] ids) {
        return model.detokenize(ids);
    }

    @Override
    public java.util.Set<String> specialTokenTexts() {
        return model.specialTokenTexts();
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return model.renderChat(messages, addGenerationPrompt);
    }

    @Override
    public void close() {
        model.close();
    }
}
