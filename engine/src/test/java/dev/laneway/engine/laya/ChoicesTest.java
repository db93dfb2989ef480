package dev.laneway.engine.laya;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ChoicesTest {

    @Test
    void confidenceIsOneMinusEntropyOverItsMaximum() {
        assertEquals(0.0, Choices.confidence(new double[]{1 / 3.0, 1 / 3.0, 1 / 3.0}), 1e-12);
        assertEquals(1.0, Choices.confidence(new double[]{1, 0, 0}), 1e-12);
        double[] p = {0.7, 0.2, 0.1};
        double h = -(0.7 * Math.log(0.7) + 0.2 * Math.log(0.2) + 0.1 * Math.log(0.1));
        assertEquals(1 - h / Math.log(3), Choices.confidence(p), 1e-12);
        assertEquals(0.2702, Choices.confidence(p), 1e-4);
    }

    @Test
    void scoresActAsLogits() {
        double[] p = Choices.softmax(new double[]{2, 0, 1});
        double sum = Math.exp(2) + 1 + Math.exp(1);
        assertArrayEquals(new double[]{Math.exp(2) / sum, 1 / sum, Math.exp(1) / sum}, p, 1e-12);
        assertArrayEquals(Choices.softmax(new double[]{-1000, -1002, -1001}), p, 1e-12, "shift invariant, no underflow");
        Classification c = Choices.fromScores(new double[]{2, 0, 1});
        assertEquals(RequestClass.CODE, c.requestClass());
        assertEquals(Choices.confidence(p), c.confidence(), 1e-12);
    }

    @Test
    void tiesGoToProseThenShortThenCode() {
        assertEquals(RequestClass.PROSE, Choices.fromScores(new double[]{0, 0, 0}).requestClass());
        assertEquals(RequestClass.SHORT, Choices.fromScores(new double[]{1, 0, 1}).requestClass());
        assertEquals(RequestClass.PROSE, Choices.fromScores(new double[]{1, 1, 1}).requestClass());
        assertEquals(RequestClass.CODE, Choices.fromScores(new double[]{1.5, 1, 1}).requestClass());
    }

    @Test
    void refusesScoresThatAreNotOnePerChoiceOrNotFinite() {
        assertThrows(IllegalArgumentException.class, () -> Choices.fromScores(new double[]{1, 2}));
        assertThrows(IllegalArgumentException.class, () -> Choices.fromScores(new double[]{1, Double.NaN, 0}));
    }
}
