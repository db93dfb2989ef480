package dev.laneway.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** llama.cpp's reference outputs for the shared models. */
public final class Golden {
    private Golden() {
    }

    /** One prompt of {@code stories260K-public.json}. */
    public record Record(String prompt, int[] promptIds, int[] promptIdsNoSpecial, int[] completionIds,
                         String completionText, List<Position> top5) {
    }

    /** The top-5 candidates at one generated position, with llama.cpp's probabilities. */
    public record Position(int[] ids, double[] probs) {
    }

    public static List<Record> stories260kPublic() {
        JsonNode root = read("stories260K-public.json");
        List<Record> records = new ArrayList<>();
        for (JsonNode r : root.get("records")) {
            List<Position> top5 = new ArrayList<>();
            for (JsonNode p : r.get("top5_first16")) {
                JsonNode t = p.get("top5");
                int[] ids = new int[t.size()];
                double[] probs = new double[t.size()];
                for (int i = 0; i < t.size(); i++) {
                    ids[i] = t.get(i).get("id").asInt();
                    probs[i] = t.get(i).get("prob").asDouble();
                }
                top5.add(new Position(ids, probs));
            }
            records.add(new Record(r.get("prompt").asText(), ints(r.get("prompt_token_ids")),
                    ints(r.get("prompt_token_ids_no_special")), ints(r.get("completion_token_ids")),
                    r.get("completion_text").asText(), top5));
        }
        return records;
    }

    /** The greedy ids from BOS alone in {@code file} (BOS first; an EOS last when generation ended there). */
    public static int[] greedyFromBos(String file) {
        return ints(read(file).get("ids"));
    }

    private static int[] ints(JsonNode array) {
        int[] v = new int[array.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = array.get(i).asInt();
        }
        return v;
    }

    private static JsonNode read(String file) {
        try {
            return new ObjectMapper().readTree(Shared.golden(file).toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
