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
 * @param rankTemplate a reranker's prompt, the entry named {@code rerank} of such a list: plain text in which
 *                     {@code {query}} and {@code {document}} stand for the query and a document (llama.cpp's
 *                     {@code tokenizer.chat_template.rerank})
 */
record TokenizerConfig(Optional<Boolean> addBosToken, Optional<Boolean> addEosToken, Optional<String> bosToken,
                       Optional<String> eosToken, Optional<String> chatTemplate, Optional<String> rankTemplate) {

    static final TokenizerConfig EMPTY = new TokenizerConfig(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty());

    static TokenizerConfig parse(String json) throws IOException {
        JsonNode root = new ObjectMapper().readTree(json);
        if (root == null || !root.isObject()) {
            throw new IOException("tokenizer_config.json is not a JSON object");
        }
        return new TokenizerConfig(bool(root, "add_bos_token"), bool(root, "add_eos_token"),
                tokenText(root.get("bos_token")), tokenText(root.get("eos_token")), named(root, "default"),
                named(root, "rerank"));
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

    /** The template of that name; a plain string is the {@code default} one. */
    private static Optional<String> named(JsonNode root, String name) {
        JsonNode t = root.get("chat_template");
        if (t == null || t.isNull()) {
            return Optional.empty();
        }
        if (t.isTextual()) {
            return name.equals("default") ? Optional.of(t.textValue()) : Optional.empty();
        }
        if (t.isArray()) {
            for (JsonNode named : t) {
                if (name.equals(named.path("name").asText()) && named.path("template").isTextual()) {
                    return Optional.of(named.get("template").textValue());
                }
            }
        }
        return Optional.empty();
    }

    TokenizerConfig withChatTemplate(String template) {
        return new TokenizerConfig(addBosToken, addEosToken, bosToken, eosToken, Optional.of(template),
                rankTemplate);
    }
}
