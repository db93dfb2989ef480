package dev.laneway.runtime.api;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StopStringsTest {

    @Test
    void findsTheEarliestStopStringFromAnOffset() {
        StopStrings stops = new StopStrings(List.of("END", "\n\n"));
        assertEquals(5, stops.find("Hello\n\nEND", 0));
        assertEquals(7, stops.find("Hello\n\nEND", 6));
        assertEquals(-1, stops.find("Hello\nEN", 0));
    }

    @Test
    void holdsBackTheLongestEndThatCouldStillBecomeAStopString() {
        StopStrings stops = new StopStrings(List.of("world.", "wax"));
        assertEquals(0, stops.heldBack("Hello"));
        assertEquals(1, stops.heldBack("Hello w"));
        assertEquals(3, stops.heldBack("Hello wor"));
        assertEquals(5, stops.heldBack("Hello world"));
        // A whole stop string is found, not held back.
        assertEquals(0, stops.heldBack("Hello world.x"));
        assertEquals(2, stops.heldBack("wa"));
    }

    @Test
    void holdsBackNothingWithoutStopStrings() {
        StopStrings none = new StopStrings(List.of());
        assertEquals(0, none.heldBack("anything"));
        assertEquals(-1, none.find("anything", 0));
    }
}
