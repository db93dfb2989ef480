package dev.laneway.runtime.api;

import dev.laneway.engine.grammar.GrammarCursor;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The grammars of tool choices, run by the engine's matcher over a vocabulary of single bytes: each format's call
 * syntax is accepted with conforming arguments and refused otherwise, and what it accepts reads back as the calls.
 */
class ToolCallGrammarTest {
    private static final int EOS = 256;
    private static final Grammars BYTES = new Grammars(256, b -> new byte[] {(byte) b}, new int[] {EOS}, 257);

    private static final List<Object> TOOLS = List.of(
            tool("get_weather", Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string")),
                    "required", List.of("city"), "additionalProperties", false)),
            tool("add", Map.of("type", "object", "properties", Map.of("a", Map.of("type", "integer")),
                    "required", List.of("a"), "additionalProperties", false)));

    private static Object tool(String name, Map<String, Object> parameters) {
        return Map.of("type", "function", "function", Map.of("name", name, "parameters", parameters));
    }

    private static OutputGrammar grammar(ToolCallFormat format, String template, ToolChoice choice,
                                         boolean parallel) {
        return ToolCallGrammar.of(format, template, OfferedTool.of(TOOLS), choice, parallel).orElseThrow();
    }

    /** Whether the grammar allows {@code text} byte by byte, and allows it to end there. */
    private static boolean accepts(OutputGrammar grammar, String text) {
        GrammarCursor cursor = BYTES.start(grammar);
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            if (!cursor.allows(b & 0xFF)) {
                return false;
            }
            cursor.accept(b & 0xFF);
        }
        return cursor.allows(EOS);
    }

    private static void assertCalls(ToolCallFormat format, String text, String... namesAndArguments) {
        ToolCallFormat.Parsed parsed = format.parse(text);
        assertEquals(namesAndArguments.length / 2, parsed.calls().size(), text);
        for (int i = 0; i < parsed.calls().size(); i++) {
            assertEquals(namesAndArguments[2 * i], parsed.calls().get(i).name());
            assertEquals(namesAndArguments[2 * i + 1], parsed.calls().get(i).arguments());
        }
    }

    @Test
    void hermesCallsAreRequiredAndTheirArgumentsConform() {
        OutputGrammar g = grammar(ToolCallFormat.HERMES, "<tool_call>", ToolChoice.REQUIRED, true);
        String one = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
        String two = one + "\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2}}\n</tool_call>";
        assertTrue(accepts(g, one));
        assertTrue(accepts(g, two));
        assertCalls(ToolCallFormat.HERMES, two, "get_weather", "{\"city\":\"Paris\"}", "add", "{\"a\":2}");
        assertFalse(accepts(g, "Sure."), "an answer that is no call");
        assertFalse(accepts(g, one.replace("get_weather", "get_time")), "a function not offered");
        assertFalse(accepts(g, one.replace("\"Paris\"", "7")), "arguments against the schema");
        assertFalse(accepts(g, one.replace("{\"city\": \"Paris\"}", "{}")), "a required argument missing");
        assertFalse(accepts(grammar(ToolCallFormat.HERMES, "", ToolChoice.REQUIRED, false), two),
                "two calls where parallel calls are off");
        OutputGrammar named = grammar(ToolCallFormat.HERMES, "", ToolChoice.named("add"), true);
        assertFalse(accepts(named, one));
        assertTrue(accepts(named, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": -4}}\n</tool_call>"));
        assertTrue(ToolCallGrammar.of(ToolCallFormat.HERMES, "", OfferedTool.of(TOOLS), ToolChoice.AUTO, true)
                .isEmpty(), "auto leaves a native format free");
    }

    @Test
    void everyFormatsVariantReadsBack() {
        String mistral = "[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\": 1}}, {\"name\": \"get_weather\","
                + " \"arguments\": {\"city\": \"Rome\"}}]";
        assertTrue(accepts(grammar(ToolCallFormat.MISTRAL, "[TOOL_CALLS]", ToolChoice.REQUIRED, true), mistral));
        assertCalls(ToolCallFormat.MISTRAL, mistral, "add", "{\"a\":1}", "get_weather", "{\"city\":\"Rome\"}");
        String mistralArgs = "[TOOL_CALLS]add[ARGS]{\"a\": 1}[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Rome\"}";
        assertTrue(accepts(grammar(ToolCallFormat.MISTRAL, "[TOOL_CALLS] [ARGS]", ToolChoice.REQUIRED, true),
                mistralArgs));
        assertCalls(ToolCallFormat.MISTRAL, mistralArgs, "add", "{\"a\":1}", "get_weather", "{\"city\":\"Rome\"}");

        String begin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C><\uFF5Ctool\u2581call\u2581begin\uFF5C>";
        String sep = "<\uFF5Ctool\u2581sep\uFF5C>";
        String end = "<\uFF5Ctool\u2581call\u2581end\uFF5C><\uFF5Ctool\u2581calls\u2581end\uFF5C>";
        String r1 = begin + "function" + sep + "add\n```json\n{\"a\": 3}\n```" + end;
        assertTrue(accepts(grammar(ToolCallFormat.DEEPSEEK, "```json", ToolChoice.REQUIRED, true), r1));
        assertCalls(ToolCallFormat.DEEPSEEK, r1, "add", "{\"a\":3}");
        String v31 = begin + "add" + sep + "{\"a\": 3}" + end;
        assertTrue(accepts(grammar(ToolCallFormat.DEEPSEEK, "", ToolChoice.REQUIRED, true), v31));
        assertCalls(ToolCallFormat.DEEPSEEK, v31, "add", "{\"a\":3}");

        String llama = "{\"name\": \"add\", \"parameters\": {\"a\": 5}}";
        OutputGrammar llamaGrammar = grammar(ToolCallFormat.LLAMA3, "", ToolChoice.REQUIRED, true);
        assertTrue(accepts(llamaGrammar, llama));
        assertFalse(accepts(llamaGrammar, llama + llama), "Llama 3 makes one call an answer");
        assertCalls(ToolCallFormat.LLAMA3, llama, "add", "{\"a\":5}");
    }

    @Test
    void aGenericAnswerIsAReplyOrACall() {
        OutputGrammar auto = ToolCallGrammar.of(ToolCallFormat.GENERIC, "", OfferedTool.of(TOOLS), ToolChoice.AUTO,
                false).orElseThrow();
        String call = "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}}";
        assertTrue(accepts(auto, call));
        assertTrue(accepts(auto, "{\"response\": \"It is \\\"sunny\\\".\"}"));
        assertFalse(accepts(auto, "It is sunny."));
        assertCalls(ToolCallFormat.GENERIC, call, "get_weather", "{\"city\":\"Oslo\"}");
        ToolCallFormat.Parsed reply = ToolCallFormat.GENERIC.parse("{\"response\": \"It is \\\"sunny\\\".\"}");
        assertEquals("It is \"sunny\".", reply.content());
        assertTrue(reply.calls().isEmpty());
        assertEquals("{\"response\": \"cut sh", ToolCallFormat.GENERIC.parse("{\"response\": \"cut sh").content(),
                "an answer cut short is its text");

        OutputGrammar required = grammar(ToolCallFormat.GENERIC, "", ToolChoice.REQUIRED, true);
        assertFalse(accepts(required, "{\"response\": \"no\"}"));
        String calls = "{\"tool_calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1}}, {\"name\": \"add\","
                + " \"arguments\": {\"a\": 2}}]}";
        assertTrue(accepts(required, calls));
        assertCalls(ToolCallFormat.GENERIC, calls, "add", "{\"a\":1}", "add", "{\"a\":2}");
    }

    @Test
    void parametersItCannotHonourAreRefusedNamingTheTool() {
        List<Object> tools = List.of(tool("x", Map.of("type", "object", "properties",
                Map.of("s", Map.of("type", "string", "pattern", "^a$")))));
        OutputGrammar g = ToolCallGrammar.of(ToolCallFormat.HERMES, "", OfferedTool.of(tools), ToolChoice.REQUIRED,
                true).orElseThrow();
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> BYTES.check(g));
        assertEquals("tools[0].function.parameters", e.param());
        assertTrue(e.getMessage().contains("pattern"), e.getMessage());
    }
}
