package dev.laneway.engine.laya;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HeuristicClassifierTest {
    private final HeuristicClassifier heuristic = new HeuristicClassifier();

    @Test
    void countsTheDocumentedCues() {
        // code: "python", "function"; short: 80 bytes or less.
        assertArrayEquals(new double[]{2, 0, 1}, heuristic.scores("Write a Python function that reverses a list"));
        // prose: "story", "once upon a time"; nothing else (over 80 bytes, no question mark).
        assertArrayEquals(new double[]{0, 2, 0}, heuristic.scores("Tell a bedtime story for a child that begins "
                + "with once upon a time and ends happily ever after, please"));
        // short: "what is", "capital of", short, one line ending in '?'.
        assertArrayEquals(new double[]{0, 0, 4}, heuristic.scores("What is the capital of France?"));
        // code: a fence (2) and punctuation-heavy text (1); words inside count too: "def", "return".
        assertArrayEquals(new double[]{5, 0, 0}, heuristic.scores("Why does this fail?\n```\ndef f(x):\n"
                + "    return {x: [x(), (x)]}\n```\n and now I am really lost after trying for a long time"));
    }

    @Test
    void matchesWholeWordsOnlyAndIgnoresCase() {
        assertArrayEquals(new double[]{0, 0, 0}, heuristic.scores("Decoded barcodes whenever somewhere, returning "
                + "importantly: nothing of this text is a cue word at all, honestly."));
        assertArrayEquals(new double[]{1, 0, 0}, heuristic.scores("SQL, sql and Sql count once; "
                + "this sentence is long enough to stay clear of the short-state cue."));
    }

    @Test
    void confidenceFollowsTheEntropyOfTheSoftmaxedScores() {
        Classification c = heuristic.classify("Write a Python function that reverses a list");
        assertEquals(RequestClass.CODE, c.requestClass());
        assertEquals(Choices.confidence(Choices.softmax(new double[]{2, 0, 1})), c.confidence(), 1e-12);
        assertEquals(0.2423, c.confidence(), 1e-4);
        Classification none = heuristic.classify("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do "
                + "eiusmod tempor incididunt ut labore.");
        assertEquals(RequestClass.PROSE, none.requestClass(), "no evidence: the catch-all class");
        assertEquals(0.0, none.confidence(), 1e-12);
    }

    @Test
    void isDeterministic() {
        String state = "Explain how a compiler turns source code into machine code, in a short essay.";
        Classification first = heuristic.classify(state);
        for (int i = 0; i < 5; i++) {
            assertEquals(first, heuristic.classify(state));
        }
        assertTrue(first.confidence() > 0);
    }
}
