package dev.laneway.runtime.api;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.testing.AllocationBudget;

import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Any bytes as the body of {@code POST /v1/chat/completions}, {@code /v1/completions}, llama-server's
 * {@code /completion} and Ollama's {@code /api/chat} and {@code /api/generate} ({@link OllamaRequest}): {@link JsonRequest#parse} and the endpoint's reader ({@link ChatRequest#read},
 * {@link CompletionRequest#read}, {@link CompletionRequest#readNative}, each reading {@link GenerationParams}) either
 * read the request or refuse it with a 400 {@link ApiException} that names what is wrong; allocation stays in
 * proportion to the body. No model is needed: these run before the request reaches one. Seeds: requests as the docs and
 * the OpenAI SDKs send them, and the crashes fuzzing found.
 */
class RequestFuzzTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @FuzzTest(maxDuration = "60s")
    void readAnyBody(byte[] body) throws Exception {
        BUDGET.check(body.length, () -> {
            read(body, r -> ChatRequest.read(r, RequestDefaults.LLAMA_SERVER));
            read(body, r -> CompletionRequest.read(r, RequestDefaults.LLAMA_SERVER));
            read(body, r -> CompletionRequest.readNative(r, RequestDefaults.LLAMA_SERVER));
            read(body, r -> ChatRequest.read(JsonRequest.of(OllamaRequest.chat(r, 4096)),
                    RequestDefaults.LLAMA_SERVER));
            read(body, r -> {
                JsonRequest mapped = JsonRequest.of(OllamaRequest.generate(r, 4096));
                return mapped.raw("prompt") != null ? CompletionRequest.read(mapped, RequestDefaults.LLAMA_SERVER)
                        : ChatRequest.read(mapped, RequestDefaults.LLAMA_SERVER);
            });
            read(body, OllamaRequest::keepAlive);
        });
    }

    private static void read(byte[] body, Function<JsonRequest, Object> reader) {
        try {
            reader.apply(JsonRequest.parse(body, MAPPER));
        } catch (ApiException e) {
            assertEquals(400, e.status(), e.getMessage());
            assertFalse(e.getMessage().isBlank());
        }
    }
}
