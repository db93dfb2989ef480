package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code POST /v1/completions}: one or more prompts, each a string or a list of token ids.
 *
 * @param model   the model asked for; empty: the served one
 * @param prompts the prompts, in order; each gets {@code params.n()} choices
 */
record CompletionRequest(Optional<String> model, List<Prompt> prompts, GenerationParams params) {

    CompletionRequest {
        prompts = List.copyOf(prompts);
    }

    /** A prompt as the client gave it. */
    sealed interface Prompt permits TextPrompt, TokenPrompt {
    }

    /** Text, tokenized with the model's leading special tokens and special-token text recognised. */
    record TextPrompt(String text) implements Prompt {
    }

    /** Token ids, used as given. */
    record TokenPrompt(int[] ids) implements Prompt {
    }

    /** The most prompts one request may carry, and the most choices all of them together. */
    static final int MAX_PROMPTS = 32;
    static final int MAX_CHOICES = 64;

    static CompletionRequest read(JsonRequest r) {
        List<Prompt> prompts = prompts(r.raw("prompt"));
        GenerationParams params = GenerationParams.read(r, false);
        if (prompts.size() * params.n() > MAX_CHOICES) {
            throw ApiException.invalidValue("n", "a request makes at most " + MAX_CHOICES + " choices: its "
                    + prompts.size() + " prompts with n " + params.n() + " make " + prompts.size() * params.n());
        }
        return new CompletionRequest(r.string("model"), prompts, params);
    }

    /** {@code "text"}, {@code ["text", ...]}, {@code [1, 2, ...]} or {@code [[1, 2], ...]}. */
    private static List<Prompt> prompts(JsonNode node) {
        String shape = "prompt must be a string, a list of strings, a list of token ids or a list of such lists";
        if (node == null) {
            throw ApiException.invalidValue("prompt", "prompt is required");
        }
        List<Prompt> prompts = new ArrayList<>();
        if (node.isTextual()) {
            prompts.add(new TextPrompt(node.textValue()));
            return prompts;
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("prompt", shape);
        }
        if (node.isEmpty()) {
            throw ApiException.invalidValue("prompt", "prompt must not be an empty list");
        }
        if (node.get(0).isNumber()) {
            prompts.add(new TokenPrompt(tokenIds(node, "prompt", shape)));
            return prompts;
        }
        if (node.size() > MAX_PROMPTS) {
            throw ApiException.invalidValue("prompt", "prompt holds at most " + MAX_PROMPTS + " prompts, was "
                    + node.size());
        }
        for (JsonNode item : node) {
            if (item.isTextual()) {
                prompts.add(new TextPrompt(item.textValue()));
            } else if (item.isArray()) {
                prompts.add(new TokenPrompt(tokenIds(item, "prompt", shape)));
            } else {
                throw ApiException.invalidType("prompt", shape);
            }
        }
        return prompts;
    }

    static int[] tokenIds(JsonNode array, String param, String shape) {
        if (array.isEmpty()) {
            throw ApiException.invalidValue(param, param + " holds an empty list of token ids");
        }
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = array.get(i);
            if (!id.isNumber()) {
                throw ApiException.invalidType(param, shape);
            }
            ids[i] = JsonRequest.integer(id, param);
        }
        return ids;
    }
}
