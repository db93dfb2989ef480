package dev.laneway.engine.laya;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.RouteDecision;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The decisions of recent conversations, so that a conversation is classified once and its later turns run where
 * its first did. Least recently used entries go first once {@code capacity} are held.
 */
final class ConversationCache {

    /**
     * A conversation: the model it talks to and its opening, the messages up to and including the first user
     * message.
     */
    record Key(String modelId, List<ChatMessage> opening) {
        Key {
            Objects.requireNonNull(modelId, "modelId");
            opening = List.copyOf(opening);
        }
    }

    private final Map<Key, RouteDecision> entries;

    ConversationCache(int capacity) {
        this.entries = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, RouteDecision> eldest) {
                return size() > capacity;
            }
        };
    }

    synchronized Optional<RouteDecision> get(Key key) {
        return Optional.ofNullable(entries.get(key));
    }

    /** Keeps {@code decision} unless the conversation got one meanwhile; returns the one kept. */
    synchronized RouteDecision putIfAbsent(Key key, RouteDecision decision) {
        RouteDecision earlier = entries.putIfAbsent(key, decision);
        return earlier != null ? earlier : decision;
    }

    synchronized int size() {
        return entries.size();
    }
}
