package dev.laneway.runtime.api;

import java.util.Optional;

/**
 * How a chat answer's text is read back: its tool calls, when the request offers tools, and its reasoning, when the
 * model thinks in {@code <think>} tags (and the request did not ask to keep them inline).
 *
 * @param tools           the tool-call format and whether several calls are kept
 * @param reasoning       whether reasoning goes to {@code reasoning_content}
 * @param reasoningOpened whether the prompt already opened the think block
 */
record AnswerReading(Optional<ToolUse> tools, boolean reasoning, boolean reasoningOpened) {
    /** Text as it comes: completions, and chats without tools or reasoning. */
    static final AnswerReading PLAIN = new AnswerReading(Optional.empty(), false, false);

    boolean plain() {
        return tools.isEmpty() && !reasoning;
    }
}
