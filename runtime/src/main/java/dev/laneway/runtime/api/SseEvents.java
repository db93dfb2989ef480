package dev.laneway.runtime.api;

import java.util.ArrayList;
import java.util.List;

/**
 * Events of a stream that names each one ({@code event: NAME} before its data), as Anthropic's and OpenAI Responses'
 * streams do; a format returns them where another returns one chunk.
 */
record SseEvents(List<Event> events) {

    SseEvents {
        events = List.copyOf(events);
    }

    /** One event: its name and its JSON data. */
    record Event(String name, Object data) {
    }

    /** Collects events in order. */
    static final class Builder {
        private final List<Event> events = new ArrayList<>();

        Builder add(String name, Object data) {
            events.add(new Event(name, data));
            return this;
        }

        SseEvents build() {
            return new SseEvents(events);
        }
    }
}
