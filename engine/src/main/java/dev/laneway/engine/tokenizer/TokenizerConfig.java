package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.Optional;

/**
 * What this project reads from a {@code tokenizer_config.json}: the special tokens by text, whether BOS and EOS are
 * added, and the chat template.
 *
 * @param addBosToken  {@code add_bos_token}, when the file says
 * @param addEosToken  {@code add_eos_token}, when the file says
 * @param bosToken     {@code bos_token}
 * @param eosToken     {@code eos_token}
 * @param chatTemplate {@code chat_template} (a string, or the entry named {@code default} of a list of named ones)
 */
record TokenizerConfig(Optional<Boolean> addBosToken, Optional<Boolean> addEosToken, Optional<String> bosToken,
                       Optional<String> eosToken, Optional<String> chatTemplate) {

    static final TokenizerConfig EMPTY = new TokenizerConfig(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty());

    static TokenizerConfig parse(String json) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json);
        if (root == null || !root.isObject()) {
            throw new IOException("tokenizer_config.json is not a JSON object");
        }
        return new TokenizerConfig(bool(root, "add_bos_token"), bool(root, "add_eos_token"),
                tokenText(root.get("bos_token")), tokenText(root.get("eos_token")), chatTemplate(root));
    }

    private static Optional<Boolean> bool(JsonNode root, String key) {
        JsonNode v = root.get(key);
        return v != null && v.isBoolean() ? Optional.of(v.booleanValue()) : Optional.empty();
    }

    /** A special token written as a string, or as an added-token object with {@code content}. */
    private static Optional<String> tokenText(JsonNode v) {
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (v.isTextual()) {
            return Optional.of(v.textValue());
        }
        JsonNode content = v.get("content");
        return content != null && content.isTextual() ? Optional.of(content.textValue()) : Optional.empty();
    }

    private static Optional<String> chatTemplate(JsonNode root) {
        JsonNode t = root.get("chat_template");
        if (t == null || t.isNull()) {
            return Optional.empty();
        }
        if (t.isTextual()) {
            return Optional.of(t.textValue());
        }
        if (t.isArray()) {
            for (JsonNode named : t) {
                if ("default".equals(named.path("name").asText()) && named.path("template").isTextual()) {
                    return Optional.of(named.get("template").textValue());
                }
            }
        }
        return Optional.empty();
    }

    TokenizerConfig withChatTemplate(String template) {
        return new TokenizerConfig(addBosToken, addEosToken, bosToken, eosToken, Optional.of(template));
    }
}
