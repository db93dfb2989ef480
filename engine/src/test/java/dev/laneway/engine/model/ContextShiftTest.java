package dev.laneway.engine.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.engine.testing.LlamaCppReference;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llama-server's context shift: stories260K in a context of 256 generates 400 tokens after a 36-token prompt, so its
 * KV cache drops half of what follows the kept positions twice, and every token is the one llama-server generates
 * with {@code --context-shift}, on every forward. The reference, and the command that made it, are in
 * {@code context-shift/stories260K-ctx256.json}.
 */
class ContextShiftTest {

    @ParameterizedTest
    @ValueSource(strings = {"java", "native", "fused"})
    void aFullContextShiftsAsLlamaServerShiftsIt(String kernels) throws IOException {
        JsonNode reference = LlamaCppReference.read("/context-shift/stories260K-ctx256.json");
        int context = reference.get("context").asInt();
        try (LanewayModel model = Packed.open(Packed.stories260k("f32"), kernels,
                RouteOptions.defaults().withOpt("ctx", Integer.toString(context)))) {
            assertTrue(model.shiftsContext());
            for (JsonNode r : reference.get("records")) {
                int[] prompt = ints(r.get("prompt_ids"));
                int[] expected = ints(r.get("completion_ids"));
                // the BOS token and n_keep prompt tokens after it stay
                int keep = 1 + r.get("n_keep").asInt();
                List<GeneratedToken> tokens = new ArrayList<>();
                GenerationResult result = model.generate(new GenerationRequest(prompt, expected.length,
                        Sampling.GREEDY, GenerationRequest.NO_LOGPROBS, true, Optional.empty(), false,
                        GenerationRequest.ANY_SLOT, false, GenerationRequest.NO_SALT, keep), tokens::add);
                // 436 positions: full at 256, 127 dropped, full again at 383: two shifts
                assertTrue(prompt.length + expected.length > context + context / 2, "the context shifts twice");
                assertArrayEquals(expected, tokens.stream().mapToInt(GeneratedToken::id).toArray(),
                        kernels + " n_keep " + r.get("n_keep"));
                assertEquals(expected.length, result.generatedTokens());
            }
            // Without a shift the same request ends where the context does.
            JsonNode first = reference.get("records").get(0);
            int[] prompt = ints(first.get("prompt_ids"));
            GenerationResult ended = model.generate(new GenerationRequest(prompt, 400, Sampling.GREEDY,
                    GenerationRequest.NO_LOGPROBS, true, Optional.empty(), false), t -> true);
            assertEquals(context - prompt.length, ended.generatedTokens());
        }
    }

    private static int[] ints(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false).mapToInt(JsonNode::asInt).toArray();
    }
}
