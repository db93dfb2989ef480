package dev.laneway.engine.laya;

import dev.laneway.engine.format.FormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PolicyJsonTest {
    private static final Path FILE = Path.of("ckpt", "route-policy.json");

    private static RoutePolicy parse(String json) throws FormatException {
        return PolicyJson.parse(FILE, json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsThePolicyOfTheIssue() throws FormatException {
        RoutePolicy p = parse("""
                {"min_confidence": 0.16, "default": "cpu",
                 "classes": {"code": {"device": "npu", "why": "lane kernels"},
                             "prose": {"device": "cpu", "why": "long outputs"},
                             "short": {"device": "npu"},
                             "long_doc": {"device": "gpu", "why": "big prompts"}}}""");
        assertEquals(0.16, p.minConfidence());
        assertEquals("cpu", p.defaultDevice());
        assertEquals(new RoutePolicy.ClassRoute("npu", "lane kernels"), p.classes().get(RequestClass.CODE));
        assertEquals(new RoutePolicy.ClassRoute("npu", ""), p.classes().get(RequestClass.SHORT));
        assertEquals("gpu", p.deviceFor(RequestClass.LONG_DOC).orElseThrow());
        assertEquals(List.of("cpu", "npu", "gpu"), p.devices(), "the default first, then the rows, each once");
        assertEquals("min_confidence 0.16, default cpu, code -> npu (lane kernels), prose -> cpu (long outputs), "
                + "short -> npu, long_doc -> gpu (big prompts)", p.describe());
    }

    @Test
    void aClassWithoutARowGoesToTheDefault() throws FormatException {
        RoutePolicy p = parse("{\"min_confidence\": 0, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": \"npu\"}}}");
        assertTrue(p.deviceFor(RequestClass.PROSE).isEmpty());
        assertEquals(Map.of(RequestClass.CODE, new RoutePolicy.ClassRoute("npu", "")), p.classes());
        assertEquals(List.of("cpu"), parse("{\"min_confidence\": 1, \"default\": \"cpu\"}").devices());
    }

    /** Each malformed policy is refused with a message naming the field and what was wrong. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"poetry\": {\"device\": \"cpu\"}}}"
                    + "| classes.poetry: unknown class (known: code, prose, short, long_doc)",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": 3}}}"
                    + "| classes.code.device: expected a device name (a non-empty string), was number 3",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"why\": \"fast\"}}}"
                    + "| classes.code.device: missing (a device name such as cpu)",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": \" \"}}}"
                    + "| classes.code.device: expected a device name (a non-empty string), was \" \"",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": \"npu\"}}"
                    + "| classes.code: expected an object with a device, was string \"npu\"",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": \"npu\", \"why\": 1}}}"
                    + "| classes.code.why: expected a string, was number 1",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": \"npu\", \"speed\": 1}}}"
                    + "| classes.code.speed: unknown field (known: device, why)",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": [\"code\"]}"
                    + "| classes: expected an object of class rows, was array",
            "{\"min_confidence\": 0.2, \"default\": null}"
                    + "| default: expected a device name (a non-empty string), was null",
            "{\"min_confidence\": 0.2}"
                    + "| default: missing (a device name such as cpu)",
            "{\"default\": \"cpu\"}"
                    + "| min_confidence: missing (a number from 0 to 1)",
            "{\"min_confidence\": 1.5, \"default\": \"cpu\"}"
                    + "| min_confidence: expected a number from 0 to 1, was 1.5",
            "{\"min_confidence\": \"high\", \"default\": \"cpu\"}"
                    + "| min_confidence: expected a number from 0 to 1, was \"high\"",
            "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"min_confidense\": 0.3}"
                    + "| min_confidense: unknown field (known: classes, default, min_confidence)",
            "[1, 2]"
                    + "| expected a JSON object with min_confidence, default and classes",
    })
    void refusesAMalformedPolicyNamingTheField(String json, String message) {
        FormatException e = assertThrows(FormatException.class, () -> parse(json));
        assertEquals(FILE + ": " + message.strip(), e.getMessage());
    }

    @Test
    void refusesBrokenJsonAndDuplicateKeys() {
        FormatException broken = assertThrows(FormatException.class, () -> parse("{\"min_confidence\": 0.2,"));
        assertTrue(broken.getMessage().startsWith(FILE + ": not valid JSON: "), broken.getMessage());
        FormatException twice = assertThrows(FormatException.class, () -> parse(
                "{\"min_confidence\": 0.2, \"default\": \"cpu\", \"classes\": {\"code\": {\"device\": \"a\"},"
                        + " \"code\": {\"device\": \"b\"}}}"));
        assertTrue(twice.getMessage().contains("not valid JSON: Duplicate field 'code'"), twice.getMessage());
    }
}
