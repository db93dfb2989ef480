package dev.laneway.spi;

import java.util.List;
import java.util.Objects;

/** What the Laya router reads to decide where a request runs: a completion's prompt, or a chat's messages. */
public sealed interface RoutingInput permits RoutingInput.Prompt, RoutingInput.Chat {

    /** A completion request's prompt text (several prompts of one request joined by newlines). */
    static RoutingInput prompt(String text) {
        return new Prompt(text);
    }

    /** A chat request's messages, in order. */
    static RoutingInput chat(List<ChatMessage> messages) {
        return new Chat(messages);
    }

    /** The text the router classifies: the prompt, or the content of every message joined by newlines. */
    String state();

    /** A completion prompt. */
    record Prompt(String text) implements RoutingInput {
        public Prompt {
            Objects.requireNonNull(text, "text");
        }

        @Override
        public String state() {
            return text;
        }
    }

    /** A conversation. */
    record Chat(List<ChatMessage> messages) implements RoutingInput {
        public Chat {
            messages = List.copyOf(messages);
        }

        @Override
        public String state() {
            StringBuilder sb = new StringBuilder();
            for (ChatMessage m : messages) {
                if (sb.length() > 0) {
                    sb.append('\n');
                }
                sb.append(m.text());
            }
            return sb.toString();
        }

        /**
         * The part of the conversation that identifies it across turns: the messages up to and including the first
         * user message (all of them when there is none).
         */
        public List<ChatMessage> opening() {
            for (int i = 0; i < messages.size(); i++) {
                if (messages.get(i).role().equals("user")) {
                    return messages.subList(0, i + 1);
                }
            }
            return messages;
        }
    }
}
