package dev.laneway.engine.lane;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;

/**
 * What one step of the engine loop runs: the next token of every sequence that is generating (and the tokens it
 * drafted after it) first, so that a long
 * prompt never stalls the streams already producing text, then chunks of the prompts being admitted, in arrival
 * order, within the step's budget of rows. A prompt waiting for another to compute the prefix they share is left out.
 */
final class StepPlan {
    private StepPlan() {
    }

    /** One sequence's part of the step: its index in the running list, and how many rows it feeds. */
    record Entry(int index, int rows) {
    }

    /**
     * @param count       running sequences, in arrival order
     * @param prefilling  whether sequence i still has prompt tokens to feed
     * @param promptLeft  how many
     * @param decodeRows  the rows sequence i feeds when it is generating: its next token and its drafts
     * @param waiting     whether sequence i's prompt waits this step (another is computing a prefix it will copy)
     * @param maxRows     the most rows a step takes (the forward's batch)
     * @param maxSegments the most sequences a step takes
     */
    static List<Entry> plan(int count, IntPredicate prefilling, IntUnaryOperator promptLeft,
                            IntUnaryOperator decodeRows, IntPredicate waiting, int maxRows, int maxSegments) {
        List<Entry> plan = new ArrayList<>();
        int rows = 0;
        for (int i = 0; i < count && rows < maxRows && plan.size() < maxSegments; i++) {
            if (!prefilling.test(i)) {
                int n = Math.min(decodeRows.applyAsInt(i), maxRows - rows);
                plan.add(new Entry(i, n));
                rows += n;
            }
        }
        for (int i = 0; i < count && rows < maxRows && plan.size() < maxSegments; i++) {
            if (prefilling.test(i) && !waiting.test(i)) {
                int n = Math.min(promptLeft.applyAsInt(i), maxRows - rows);
                plan.add(new Entry(i, n));
                rows += n;
            }
        }
        return plan;
    }
}
