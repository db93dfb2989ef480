package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** A test tool: llama.cpp's greedy outputs for stories260K ({@code ../shared/golden/stories260K-public.json}). */
final class Golden {
    private Golden() {
    }

    /** One prompt and llama.cpp's greedy continuation. */
    record Record(String prompt, int[] promptIds, int[] completionIds, String completionText, JsonNode top5) {
    }

    static List<Record> stories260K() {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(StoriesProfile.shared().resolve("golden/stories260K-public.json")
                    .toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Record> records = new ArrayList<>();
        for (JsonNode r : root.get("records")) {
            records.add(new Record(r.get("prompt").asText(), ints(r.get("prompt_token_ids")),
                    ints(r.get("completion_token_ids")), r.get("completion_text").asText(), r.get("top5_first16")));
        }
        return records;
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }
}
