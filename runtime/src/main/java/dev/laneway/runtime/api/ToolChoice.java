package dev.laneway.runtime.api;

import java.util.Optional;

/**
 * What a chat request's {@code tool_choice} asks of the answer: it may call a tool ({@code auto}), must call one
 * ({@code required}), or must call the one named.
 *
 * @param required whether the answer must be a call
 * @param function the one function it must call, when named
 */
record ToolChoice(boolean required, Optional<String> function) {
    static final ToolChoice AUTO = new ToolChoice(false, Optional.empty());
    static final ToolChoice REQUIRED = new ToolChoice(true, Optional.empty());

    static ToolChoice named(String function) {
        return new ToolChoice(true, Optional.of(function));
    }
}
