package dev.laneway.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.Sampling;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A test tool: llama-server's greedy outputs for a model, as {@code bench/llamacpp-reference.py} writes them (a
 * {@code records} array of prompt ids, completion ids and each position's top log-probabilities), kept as a test
 * resource; and the check that a model generates them.
 */
public final class LlamaCppReference {
    private LlamaCppReference() {
    }

    /** The reference at class-path resource {@code resource}, e.g. {@code /rope/plain.json}. */
    public static JsonNode read(String resource) throws IOException {
        try (InputStream in = LlamaCppReference.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + resource);
            }
            return new ObjectMapper().readTree(in);
        }
    }

    /**
     * Asserts that {@code model} generates every record's completion greedily, token for token, and that each of
     * llama.cpp's top candidates is among its 10 most likely with a log-probability within {@code tolerance}.
     */
    public static void assertGenerates(LanewayModel model, JsonNode reference, String label, double tolerance) {
        assertGenerates(model, List.of(), reference, label, tolerance);
    }

    /** As above, every generation applying {@code adapters}. */
    public static void assertGenerates(LanewayModel model, List<dev.laneway.spi.AdapterUse> adapters,
                                       JsonNode reference, String label, double tolerance) {
        for (JsonNode r : reference.get("records")) {
            int[] expected = ints(r.get("completion_ids"));
            List<GeneratedToken> tokens = generate(model, adapters, ints(r.get("prompt_ids")), expected.length);
            assertArrayEquals(expected, tokens.stream().mapToInt(GeneratedToken::id).toArray(),
                    label + " " + r.get("prompt_ids"));
            for (int pos = 0; pos < tokens.size(); pos++) {
                Map<Integer, Double> ours = new HashMap<>();
                tokens.get(pos).top().forEach(t -> ours.put(t.id(), (double) t.logprob()));
                for (JsonNode c : r.get("top").get(pos)) {
                    Double lp = ours.get(c.get("id").asInt());
                    String where = label + " " + r.get("prompt_ids") + " position " + pos + " token " + c.get("id");
                    assertTrue(lp != null, where + " is not among our 10 most likely");
                    assertEquals(c.get("logprob").asDouble(), lp, tolerance, where);
                }
            }
        }
    }

    /** {@code n} greedy tokens after {@code prompt}, each with its 10 most likely candidates. */
    public static List<GeneratedToken> generate(LanewayModel model, int[] prompt, int n) {
        return generate(model, List.of(), prompt, n);
    }

    /** As above, applying {@code adapters}. */
    public static List<GeneratedToken> generate(LanewayModel model, List<dev.laneway.spi.AdapterUse> adapters,
                                                int[] prompt, int n) {
        List<GeneratedToken> tokens = new ArrayList<>();
        model.generate(new GenerationRequest(prompt, n, Sampling.GREEDY, 10, true).withAdapters(adapters),
                tokens::add);
        return tokens;
    }

    public static int[] ints(JsonNode array) {
        int[] v = new int[array.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = array.get(i).asInt();
        }
        return v;
    }
}
