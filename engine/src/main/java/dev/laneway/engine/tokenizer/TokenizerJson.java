package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * What this project reads from a {@code tokenizer.json} besides handing it to the Hugging Face library: the text of
 * every id, which ids are added and special tokens, the special tokens the post-processor puts around a text, and the
 * decoder.
 */
final class TokenizerJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ObjectNode root;
    /** Token text by id; null where no token has that id. */
    final String[] texts;
    final boolean[] added;
    final boolean[] special;
    final Map<String, Integer> ids;
    /** The ids the post-processor puts before and after a single text. */
    final int[] prefix;
    final int[] suffix;

    private TokenizerJson(ObjectNode root) throws IOException {
        this.root = root;
        Map<Integer, String> byId = new HashMap<>();
        ids = new HashMap<>();
        readModelVocab(root.path("model"), byId);
        List<JsonNode> addedTokens = new ArrayList<>();
        root.path("added_tokens").forEach(addedTokens::add);
        for (JsonNode t : addedTokens) {
            int id = t.path("id").asInt(-1);
            String content = t.path("content").asText(null);
            if (id < 0 || content == null) {
                throw new IOException("tokenizer.json: an added token without id or content: " + t);
            }
            byId.put(id, content);
            ids.put(content, id);
        }
        int size = byId.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        texts = new String[size];
        byId.forEach((id, text) -> texts[id] = text);
        added = new boolean[size];
        special = new boolean[size];
        for (JsonNode t : addedTokens) {
            int id = t.get("id").asInt();
            added[id] = true;
            special[id] = t.path("special").asBoolean(false);
        }
        List<Integer> before = new ArrayList<>();
        List<Integer> after = new ArrayList<>();
        readPostProcessor(root.path("post_processor"), before, after);
        prefix = before.stream().mapToInt(Integer::intValue).toArray();
        suffix = after.stream().mapToInt(Integer::intValue).toArray();
    }

    static TokenizerJson parse(String json) throws IOException {
        JsonNode root = JSON.readTree(json);
        if (root == null || !root.isObject() || !root.path("model").isObject()) {
            throw new IOException("tokenizer.json is not a Hugging Face tokenizer (no \"model\" object)");
        }
        return new TokenizerJson((ObjectNode) root);
    }

    private void readModelVocab(JsonNode model, Map<Integer, String> byId) throws IOException {
        JsonNode vocab = model.path("vocab");
        if (vocab.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = vocab.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                byId.put(e.getValue().asInt(), e.getKey());
                ids.put(e.getKey(), e.getValue().asInt());
            }
        } else if (vocab.isArray()) {
            // Unigram: [[piece, score], ...] in id order
            for (int id = 0; id < vocab.size(); id++) {
                String piece = vocab.get(id).path(0).asText();
                byId.put(id, piece);
                ids.put(piece, id);
            }
        } else {
            throw new IOException("tokenizer.json: the model (" + model.path("type").asText("untyped")
                    + ") has no vocabulary");
        }
    }

    private void readPostProcessor(JsonNode p, List<Integer> before, List<Integer> after) {
        switch (p.path("type").asText("")) {
            case "TemplateProcessing" -> {
                List<Integer> into = before;
                for (JsonNode piece : p.path("single")) {
                    if (piece.has("Sequence")) {
                        into = after;
                    } else if (piece.has("SpecialToken")) {
                        String name = piece.get("SpecialToken").path("id").asText();
                        for (JsonNode id : p.path("special_tokens").path(name).path("ids")) {
                            into.add(id.asInt());
                        }
                    }
                }
            }
            case "BertProcessing", "RobertaProcessing" -> {
                before.add(p.path("cls").path(1).asInt());
                after.add(p.path("sep").path(1).asInt());
            }
            case "Sequence" -> p.path("processors").forEach(q -> readPostProcessor(q, before, after));
            default -> {
            }
        }
    }

    JsonNode decoder() {
        return root.path("decoder");
    }

    boolean hasSpecialAddedTokens() {
        for (boolean s : special) {
            if (s) {
                return true;
            }
        }
        return false;
    }

    /**
     * The same tokenizer with its special added tokens taken out, so that their text is tokenized as plain text
     * (llama.cpp's {@code parse_special = false}); user-defined added tokens stay, as they do in llama.cpp.
     */
    String withoutSpecialTokens() {
        ObjectNode copy = root.deepCopy();
        ArrayNode kept = JSON.createArrayNode();
        for (JsonNode t : root.path("added_tokens")) {
            if (!t.path("special").asBoolean(false)) {
                kept.add(t);
            }
        }
        copy.set("added_tokens", kept);
        return copy.toString();
    }
}
