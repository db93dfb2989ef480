package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.GenerationRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reading request bodies: llama-server's defaults, the shapes of prompt and messages, and what is refused. */
class RequestReadingTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonRequest json(String body) {
        return JsonRequest.parse(body.getBytes(StandardCharsets.UTF_8), MAPPER);
    }

    @Test
    void absentSamplingFieldsTakeLlamaServerDefaults() {
        GenerationParams p = CompletionRequest.read(json("{\"prompt\":\"x\"}"), RequestDefaults.LLAMA_SERVER).params();
        assertEquals(0.8, p.temperature());
        assertEquals(40, p.topK());
        assertEquals(0.95, p.topP());
        assertEquals(0.05, p.minP());
        assertEquals(1.0, p.repetitionPenalty());
        assertTrue(p.maxTokens().isEmpty());
        assertTrue(p.seed().isEmpty());
        assertEquals(1, p.n());
        assertEquals(GenerationRequest.NO_LOGPROBS, p.topLogprobs());
        assertEquals(64, p.sampling(0).repeatWindow());
    }

    /** llama-server's n_predict is the token budget (before max_tokens), -1 none; the fields' "off" values pass. */
    @Test
    void nPredictIsTheTokenBudgetAndOffValuesPass() {
        assertEquals(7, CompletionRequest.read(json("{\"prompt\":\"x\",\"n_predict\":7,\"max_tokens\":9}"), RequestDefaults.LLAMA_SERVER)
                .params().maxTokens().getAsInt());
        assertTrue(CompletionRequest.read(json("{\"prompt\":\"x\",\"n_predict\":-1,\"max_tokens\":9}"), RequestDefaults.LLAMA_SERVER)
                .params().maxTokens().isEmpty());
        GenerationParams p = CompletionRequest.read(json("{\"prompt\":\"x\",\"n\":2,\"best_of\":2,"
                + "\"cache_prompt\":true,\"n_probs\":0,\"typical_p\":1.0,\"mirostat\":0}"), RequestDefaults.LLAMA_SERVER).params();
        assertEquals(2, p.n());
    }

    @Test
    void nCmplIsLlamaServersNameForNAndWins() {
        assertEquals(3, CompletionRequest.read(json("{\"prompt\":\"x\",\"n_cmpl\":3}"), RequestDefaults.LLAMA_SERVER)
                .params().n());
        assertEquals(2, CompletionRequest.read(json("{\"prompt\":\"x\",\"n_cmpl\":2,\"n\":4}"),
                RequestDefaults.LLAMA_SERVER).params().n());
        // The values that ask for nothing pass.
        assertEquals(1, CompletionRequest.read(json("{\"prompt\":\"x\",\"adaptive_target\":-1,"
                + "\"reasoning_budget\":-1,\"image_data\":[],\"parse_tool_calls\":true}"), RequestDefaults.LLAMA_SERVER)
                .params().n());
    }

    @Test
    void eachChoiceDrawsFromItsOwnSeed() {
        GenerationParams p = CompletionRequest.read(json("{\"prompt\":\"x\",\"seed\":7,\"n\":2}"), RequestDefaults.LLAMA_SERVER).params();
        assertEquals(7, p.sampling(0).seed().getAsLong());
        assertEquals(8, p.sampling(1).seed().getAsLong());
        assertTrue(CompletionRequest.read(json("{\"prompt\":\"x\",\"seed\":-1}"), RequestDefaults.LLAMA_SERVER).params().seed().isEmpty());
    }

    @Test
    void readsEveryPromptShape() {
        List<CompletionRequest.Prompt> prompts = CompletionRequest.read(
                json("{\"prompt\":[\"a\",[1,2],\"b\"]}"), RequestDefaults.LLAMA_SERVER).prompts();
        assertEquals(new CompletionRequest.TextPrompt("a"), prompts.get(0));
        assertArrayEquals(new int[]{1, 2}, ((CompletionRequest.TokenPrompt) prompts.get(1)).ids());
        assertEquals(3, prompts.size());
        assertArrayEquals(new int[]{5, 6}, ((CompletionRequest.TokenPrompt) CompletionRequest.read(
                json("{\"prompt\":[5,6]}"), RequestDefaults.LLAMA_SERVER).prompts().get(0)).ids());
    }

    @Test
    void chatPrefersMaxCompletionTokensAndReadsLogprobs() {
        ChatRequest r = ChatRequest.read(json("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_tokens\":9,\"max_completion_tokens\":4,\"logprobs\":true,\"top_logprobs\":3}"), RequestDefaults.LLAMA_SERVER);
        assertEquals(4, r.params().maxTokens().getAsInt());
        assertEquals(3, r.params().topLogprobs());
        assertEquals("hi", r.messages().get(0).content());
    }

    /** Text parts are joined by a newline; those of a final assistant message the answer continues, by a blank line. */
    @Test
    void aPrefillsTextPartsAreJoinedByABlankLine() {
        String parts = "[{\"type\":\"text\",\"text\":\"Wh\"},{\"type\":\"text\",\"text\":\"ill\"}]";
        ChatRequest r = ChatRequest.read(json("{\"messages\":[{\"role\":\"user\",\"content\":" + parts + "},"
                + "{\"role\":\"assistant\",\"content\":" + parts + "}]}"), RequestDefaults.LLAMA_SERVER);
        assertEquals("Wh\nill", r.messages().get(0).content());
        assertEquals("Wh\n\nill", r.messages().get(1).content());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"prompt\":\"x\",\"max_tokens\":0}                  | max_tokens",
            "{\"prompt\":\"x\",\"max_tokens\":\"5\"}              | max_tokens",
            "{\"prompt\":\"x\",\"max_tokens\":2.5}                | max_tokens",
            "{\"prompt\":\"x\",\"temperature\":-0.1}              | temperature",
            "{\"prompt\":\"x\",\"top_p\":0}                       | top_p",
            "{\"prompt\":\"x\",\"top_p\":1.5}                     | top_p",
            "{\"prompt\":\"x\",\"min_p\":2}                       | min_p",
            "{\"prompt\":\"x\",\"n\":0}                           | n",
            "{\"prompt\":\"x\",\"repetition_penalty\":0}          | repetition_penalty",
            "{\"prompt\":\"x\",\"stop\":7}                        | stop",
            "{\"prompt\":\"x\",\"stop\":[\"a\",1]}                | stop",
            "{\"prompt\":\"x\",\"seed\":\"s\"}                    | seed",
            "{\"prompt\":\"x\",\"logprobs\":21}                   | logprobs",
            "{\"prompt\":\"x\",\"stream\":\"yes\"}                | stream",
            "{\"prompt\":\"x\",\"stream_options\":{\"include_usage\":1}} | stream_options.include_usage",
            "{\"prompt\":\"x\",\"frequency_penalty\":2.5}         | frequency_penalty",
            "{\"prompt\":\"x\",\"presence_penalty\":-3}           | presence_penalty",
            "{\"prompt\":\"x\",\"logit_bias\":{\"a\":1}}          | logit_bias",
            "{\"prompt\":\"x\",\"logit_bias\":{\"5\":101}}        | logit_bias",
            "{\"prompt\":\"x\",\"logit_bias\":{\"-1\":1}}         | logit_bias",
            "{\"prompt\":\"x\",\"logit_bias\":[1]}                | logit_bias",
            "{\"prompt\":\"x\",\"model\":3}                       | model",
            "{\"prompt\":7}                                       | prompt",
            "{\"prompt\":[]}                                      | prompt",
            "{\"prompt\":[1,\"a\"]}                               | prompt",
            "{}                                                   | prompt",
            "{\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\",\"r\",\"s\",\"t\",\"u\",\"v\",\"w\",\"x\",\"y\",\"z\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\"]} | prompt",
            "{\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"n\":13}       | n",
            "{\"prompt\":\"x\",\"n_predict\":0}                | n_predict",
            "{\"prompt\":\"x\",\"n_predict\":-2}               | n_predict",
            "{\"prompt\":\"x\",\"best_of\":3}                  | best_of",
            "{\"prompt\":\"x\",\"n_probs\":5}                  | n_probs",
            "{\"prompt\":\"x\",\"typical_p\":0.5}              | typical_p",
            "{\"prompt\":\"x\",\"mirostat\":2}                 | mirostat",
            "{\"prompt\":\"x\",\"samplers\":[\"top_k\"]}       | samplers",
            "{\"prompt\":\"x\",\"functions\":[]}               | functions",
            "{\"prompt\":\"x\",\"function_call\":\"auto\"}     | function_call",
            "{\"prompt\":\"x\",\"n_cmpl\":17}                  | n_cmpl",
            "{\"prompt\":\"x\",\"adaptive_target\":0.5}        | adaptive_target",
            "{\"prompt\":\"x\",\"reasoning_budget\":0}         | reasoning_budget",
            "{\"prompt\":\"x\",\"image_data\":[{\"id\":1}]}    | image_data",
            "{\"prompt\":\"x\",\"parse_tool_calls\":false}     | parse_tool_calls",
    })
    void refusesBadCompletionFieldsByName(String body, String param) {
        ApiException e = assertThrows(ApiException.class, () -> CompletionRequest.read(json(body), RequestDefaults.LLAMA_SERVER));
        assertEquals(400, e.status());
        assertEquals(param, e.body().error().param());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "{}                                                             | messages",
            "{\"messages\":[]}                                              | messages",
            "{\"messages\":\"hi\"}                                          | messages",
            "{\"messages\":[\"hi\"]}                                        | messages[0]",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"wizard\",\"content\":\"b\"}]} | messages[1].role",
            "{\"messages\":[{\"content\":\"a\"}]}                           | messages[0].role",
            "{\"messages\":[{\"role\":\"user\",\"content\":5}]}             | messages[0].content",
            "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]} | messages[0].content[0]",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"top_logprobs\":2} | top_logprobs",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"audio\":{\"id\":\"x\"}}]} | messages[0].audio",
            "{\"messages\":[{\"role\":\"tool\",\"content\":\"a\",\"tool_call_id\":5}]} | messages[0].tool_call_id",
            "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{x\"}}]}]} | messages[0].tool_calls[0].function.arguments",
            "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"type\":\"function\"}]}]} | messages[0].tool_calls[0]",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"},{\"role\":\"assistant\",\"content\":\"c\"}]} | messages",
    })
    void refusesBadChatFieldsByName(String body, String param) {
        ApiException e = assertThrows(ApiException.class, () -> ChatRequest.read(json(body), RequestDefaults.LLAMA_SERVER));
        assertEquals(400, e.status());
        assertEquals(param, e.body().error().param());
    }

    @Test
    void everyFieldOfAMessageReachesTheTemplate() {
        ChatRequest r = ChatRequest.read(json("{\"messages\":[{\"role\":\"user\",\"content\":\"weather?\","
                + "\"name\":\"ann\"},{\"role\":\"assistant\",\"content\":null,\"refusal\":null,\"annotations\":[],"
                + "\"reasoning_content\":\"look it up\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"18\"}]}"), RequestDefaults.LLAMA_SERVER);
        assertEquals(Map.of("name", "ann"), r.messages().get(0).fields());
        ChatMessage call = r.messages().get(1);
        assertNull(call.content());
        assertEquals("look it up", call.fields().get("reasoning_content"));
        assertEquals(List.of(Map.of("id", "c1", "type", "function", "function",
                Map.of("name", "get_weather", "arguments", Map.of("city", "Paris")))), call.fields().get("tool_calls"));
        assertEquals(Map.of("tool_call_id", "c1"), r.messages().get(2).fields());
        // A template that joins the arguments to a string gets the client's JSON text; tojson gets the object.
        String template = "{% set a = messages[1].tool_calls[0].function.arguments %}"
                + "{{ 'args: ' + a }} | {{ a | tojson }} | {{ a.city }}";
        assertEquals("args: {\"city\":\"Paris\"} | {\"city\": \"Paris\"} | Paris",
                new dev.laneway.engine.tokenizer.ChatTemplate(template, "", "").render(r.messages(), false));
    }

    @Test
    void aBodyThatIsNotAJsonObjectIsRefused() {
        for (String body : List.of("", "{", "[1]", "\"text\"", "{\"prompt\":\"x\"} trailing")) {
            ApiException e = assertThrows(ApiException.class, () -> json(body), body);
            assertEquals(400, e.status());
            assertEquals("invalid_json", e.body().error().code());
        }
        // Four leading NUL bytes make the parser read UTF-32, which these bytes are not: said as such, not "could
        // not be read".
        byte[] utf32 = {0, 0, 0, 0, '{', ' ', ' ', '}'};
        ApiException e = assertThrows(ApiException.class, () -> JsonRequest.parse(utf32, MAPPER));
        assertEquals(400, e.status());
        assertTrue(e.getMessage().startsWith("the request body is not valid JSON: Invalid UTF-32 character"),
                e.getMessage());
    }
}
