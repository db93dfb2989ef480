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
    /** Ids without a token below the largest id (holes in a vocabulary), at most. */
    static final int MAX_MISSING_IDS = 1 << 16;

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
            JsonNode id = t.path("id");
            String content = t.path("content").asText(null);
            if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0 || content == null) {
                throw new IOException("tokenizer.json: an added token without a non-negative integer id or without"
                        + " content: " + t);
            }
            byId.put(id.intValue(), content);
            ids.put(content, id.intValue());
        }
        long idCount = byId.keySet().stream().mapToLong(Integer::longValue).max().orElse(-1) + 1;
        // The id arrays are sized by the largest id: one far beyond the tokens listed is corruption, refused before
        // the arrays are made.
        if (idCount - byId.size() > MAX_MISSING_IDS) {
            throw new IOException("tokenizer.json: token id " + (idCount - 1) + " leaves " + (idCount - byId.size())
                    + " ids below it without a token (the file lists " + byId.size() + " tokens; at most "
                    + MAX_MISSING_IDS + " ids may be missing)");
        }
        int size = (int) idCount;
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
                JsonNode id = e.getValue();
                if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0) {
                    throw new IOException("tokenizer.json: model.vocab gives token " + e.getKey() + " the id " + id
                            + ", expected a non-negative integer");
                }
                byId.put(id.intValue(), e.getKey());
                ids.put(e.getKey(), id.intValue());
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

    /**
     * The ids the post-processor puts around a single text. Each must be a token of the vocabulary: the first is the
     * BOS a chat template is rendered with.
     */
    private void readPostProcessor(JsonNode p, List<Integer> before, List<Integer> after) throws IOException {
        switch (p.path("type").asText("")) {
            case "TemplateProcessing" -> {
                List<Integer> into = before;
                for (JsonNode piece : p.path("single")) {
                    if (piece.has("Sequence")) {
                        into = after;
                    } else if (piece.has("SpecialToken")) {
                        String name = piece.get("SpecialToken").path("id").asText();
                        for (JsonNode id : p.path("special_tokens").path(name).path("ids")) {
                            into.add(tokenId(id, "special token " + name));
                        }
                    }
                }
            }
            case "BertProcessing", "RobertaProcessing" -> {
                before.add(tokenId(p.path("cls").path(1), "cls token"));
                after.add(tokenId(p.path("sep").path(1), "sep token"));
            }
            case "Sequence" -> {
                for (JsonNode q : p.path("processors")) {
                    readPostProcessor(q, before, after);
                }
            }
            default -> {
            }
        }
    }

    /** An id the post-processor adds, which must name a token. */
    private int tokenId(JsonNode id, String what) throws IOException {
        if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0 || id.intValue() >= texts.length
                || texts[id.intValue()] == null) {
            throw new IOException("tokenizer.json: the post-processor's " + what + " has id "
                    + (id.isMissingNode() ? "(none)" : id.toString()) + ", which is not a token of the vocabulary ("
                    + texts.length + " ids)");
        }
        return id.intValue();
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
