package dev.laneway.runtime.api;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Each family's tool-call text, as its models write it, read back; malformed calls are ordinary text. */
class ToolCallFormatTest {
    private static ToolCallFormat.Call call(String name, String arguments) {
        return new ToolCallFormat.Call(name, arguments);
    }

    @Test
    void theTemplateTellsTheFormat() {
        assertEquals(Optional.of(ToolCallFormat.HERMES), ToolCallFormat.of("{{- '<tool_call>\\n' }}"));
        assertEquals(Optional.of(ToolCallFormat.MISTRAL), ToolCallFormat.of("{{- '[TOOL_CALLS]' }}"));
        assertEquals(Optional.of(ToolCallFormat.LLAMA3), ToolCallFormat.of(
                "<|start_header_id|>{{- '{\"name\": \"' + t.name + '\", \"parameters\": ' }}"));
        assertEquals(Optional.empty(), ToolCallFormat.of("{{ messages[0]['content'] }}"));
    }

    @Test
    void hermesCallsInJsonAndXml() {
        ToolCallFormat.Parsed p = ToolCallFormat.HERMES.parse("Let me check.\n<tool_call>\n{\"name\": \"get_weather\","
                + " \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\","
                + " \"arguments\": {}}\n</tool_call>");
        assertEquals("Let me check.", p.content());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}"), call("get_time", "{}")), p.calls());
        p = ToolCallFormat.HERMES.parse("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                + "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>");
        assertNull(p.content());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\",\"days\":3}")), p.calls());
        // Cut off before its closing tag (the model ended there): still a call.
        assertEquals(List.of(call("f", "{\"x\":1}")),
                ToolCallFormat.HERMES.parse("<tool_call>{\"name\": \"f\", \"arguments\": {\"x\": 1}}").calls());
    }

    @Test
    void mistralAndLlamaCalls() {
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}")), ToolCallFormat.MISTRAL.parse(
                "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]").calls());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}"), call("now", "{}")),
                ToolCallFormat.MISTRAL.parse("[TOOL_CALLS]get_weather[ARGS]{\"city\":\"Paris\"}[TOOL_CALLS]now[ARGS]{}")
                        .calls());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}")), ToolCallFormat.LLAMA3.parse(
                "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}").calls());
        assertEquals(List.of(), ToolCallFormat.LLAMA3.parse("It is sunny in Paris.").calls());
    }

    @Test
    void deepSeekCallsInBothOfItsForms() {
        String begin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
        String call = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>";
        String sep = "<\uFF5Ctool\u2581sep\uFF5C>";
        String end = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
        String ends = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
        assertEquals(Optional.of(ToolCallFormat.DEEPSEEK), ToolCallFormat.of("{{ '" + begin + "' }}"));
        ToolCallFormat.Parsed r1 = ToolCallFormat.DEEPSEEK.parse("Checking." + begin + call + "function" + sep
                + "get_weather\n```json\n{\"city\": \"Paris\"}\n```" + end + ends);
        assertEquals("Checking.", r1.content());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}")), r1.calls());
        assertEquals(List.of(call("get_weather", "{\"city\":\"Paris\"}"), call("now", "{}")),
                ToolCallFormat.DEEPSEEK.parse(begin + call + "get_weather" + sep + "{\"city\": \"Paris\"}" + end
                        + call + "now" + sep + "{}" + end + ends).calls());
        assertEquals(List.of(), ToolCallFormat.DEEPSEEK.parse(begin + call + "function" + sep + "f\nno json" + end)
                .calls());
    }

    @Test
    void malformedCallsAreAnOrdinaryAnswer() {
        for (String text : List.of("<tool_call>{\"name\": \"f\", \"arguments\": {\"x\": </tool_call>",
                "<tool_call>not json</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>",
                "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>")) {
            ToolCallFormat.Parsed p = ToolCallFormat.HERMES.parse(text);
            assertEquals(text, p.content());
            assertEquals(List.of(), p.calls());
        }
        assertEquals(List.of(), ToolCallFormat.MISTRAL.parse("[TOOL_CALLS]oops").calls());
        assertEquals(List.of(), ToolCallFormat.LLAMA3.parse("{\"answer\": 42}").calls());
    }

    @Test
    void streamingHoldsBackFromWhereACallMayBegin() {
        ToolCallHoldBack hold = new ToolCallHoldBack(ToolCallFormat.HERMES);
        assertEquals("Sure", hold.accept("Sure"));
        assertEquals(". ", hold.accept(". <tool"));
        assertEquals("", hold.accept("_call>{\"name\""));
        assertEquals("Sure. ".length(), hold.sentLength());
        ToolCallHoldBack notACall = new ToolCallHoldBack(ToolCallFormat.HERMES);
        assertEquals("a ", notACall.accept("a <to"));
        assertEquals("<tools are", notACall.accept("ols are"));
        ToolCallHoldBack llama = new ToolCallHoldBack(ToolCallFormat.LLAMA3);
        assertEquals("", llama.accept("{\"name\""));
        ToolCallHoldBack prose = new ToolCallHoldBack(ToolCallFormat.LLAMA3);
        assertEquals("Hello", prose.accept("Hello"));
        ToolCallHoldBack generic = new ToolCallHoldBack(ToolCallFormat.GENERIC);
        assertEquals("", generic.accept("{\"response\": \"Hello"));
        assertEquals(0, generic.sentLength());
    }
}
