package dev.laneway.engine.tokenizer;

import dev.laneway.spi.InvalidRequestException;

/**
 * A chat template refused the conversation: the template called {@code raise_exception(message)}, as Hugging Face
 * templates do for a role order or content they do not support. The client's mistake (HTTP 400), with the template's
 * own message.
 */
public class ChatTemplateException extends InvalidRequestException {
    public ChatTemplateException(String message) {
        super("messages", message);
    }
}
