package dev.laneway.engine.laya;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class DecisionRuleTest {
    private static final RoutePolicy POLICY = new RoutePolicy(0.16, "cpu", Map.of(
            RequestClass.CODE, new RoutePolicy.ClassRoute("npu", "lane kernels"),
            RequestClass.PROSE, new RoutePolicy.ClassRoute("gpu", "")));

    private static String device(RequestClass c, double confidence, String... candidates) {
        return DecisionRule.device(new Classification(c, confidence), POLICY, List.of(candidates));
    }

    @Test
    void aConfidentClassGoesToItsDevice() {
        assertEquals("npu", device(RequestClass.CODE, 0.9, "cpu", "npu", "gpu"));
        assertEquals("gpu", device(RequestClass.PROSE, 0.5, "cpu", "npu", "gpu"));
    }

    @Test
    void theThresholdIsInclusive() {
        assertEquals("npu", device(RequestClass.CODE, 0.16, "cpu", "npu"), "exactly min_confidence is enough");
        assertEquals("cpu", device(RequestClass.CODE, 0.1599, "cpu", "npu"), "just below goes to the default");
    }

    @Test
    void aClassWithoutARowGoesToTheDefault() {
        assertEquals("cpu", device(RequestClass.SHORT, 1.0, "npu", "cpu"));
    }

    @Test
    void aClassDeviceThatIsNoCandidateFallsBackToTheDefault() {
        assertEquals("cpu", device(RequestClass.CODE, 0.99, "gpu", "cpu"));
    }

    @Test
    void whenNeitherIsACandidateTheFirstCandidateServes() {
        assertEquals("gpu", device(RequestClass.CODE, 0.99, "gpu"));
        assertEquals("tpu", device(RequestClass.SHORT, 0.0, "tpu", "gpu"));
        assertEquals("gpu", device(RequestClass.PROSE, 0.1, "gpu"), "unsure, and the default is absent");
    }

    @Test
    void withOneCandidateEveryRequestRunsThere() {
        for (RequestClass c : RequestClass.values()) {
            assertEquals("cpu", device(c, 1.0, "cpu"));
        }
    }

    @Test
    void noCandidatesIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> device(RequestClass.CODE, 1.0));
    }
}
