package dev.laneway.engine.lane;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class StepPlanTest {
    /** Sequences described by their prompt tokens left: 0 means generating. */
    private static List<StepPlan.Entry> plan(int maxRows, int maxSegments, int... promptLeft) {
        return StepPlan.plan(promptLeft.length, i -> promptLeft[i] > 0, i -> promptLeft[i], i -> 1, i -> false, maxRows,
                maxSegments);
    }

    private static StepPlan.Entry e(int index, int rows) {
        return new StepPlan.Entry(index, rows);
    }

    @Test
    void generatingSequencesGoFirstThenPromptsInArrivalOrder() {
        assertEquals(List.of(e(1, 1), e(3, 1), e(0, 50), e(2, 76)), plan(128, 8, 50, 0, 300, 0));
    }

    @Test
    void aLongPromptNeverCrowdsOutTheGeneratingOnes() {
        assertEquals(List.of(e(0, 1), e(1, 1), e(2, 1), e(3, 5)), plan(8, 8, 0, 0, 0, 4000));
    }

    @Test
    void promptsAreChunkedToTheBudget() {
        assertEquals(List.of(e(0, 16)), plan(16, 8, 100));
        assertEquals(List.of(e(0, 10), e(1, 6)), plan(16, 8, 10, 100));
    }

    @Test
    void theBatchNeverExceedsItsRowsOrSegments() {
        assertEquals(List.of(e(0, 1), e(1, 1)), plan(2, 8, 0, 0, 0));
        assertEquals(List.of(e(0, 1), e(2, 1), e(1, 30)), plan(128, 3, 0, 30, 0, 20));
    }

    @Test
    void aWaitingPromptGetsNoRowsAndLeavesThemToTheNext() {
        List<StepPlan.Entry> plan = StepPlan.plan(4, i -> i != 1, i -> new int[]{300, 0, 300, 300}[i], i -> 1, i -> i == 2,
                128, 8);
        assertEquals(List.of(e(1, 1), e(0, 127)), plan);
        plan = StepPlan.plan(4, i -> i != 1, i -> new int[]{20, 0, 300, 300}[i], i -> 1, i -> i == 2, 128, 8);
        assertEquals(List.of(e(1, 1), e(0, 20), e(3, 107)), plan);
    }

    @Test
    void nothingRunningPlansNothing() {
        assertEquals(List.of(), plan(128, 8));
    }
}
