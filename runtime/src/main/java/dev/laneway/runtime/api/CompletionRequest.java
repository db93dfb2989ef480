package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code POST /v1/completions}, or llama-server's {@code /completion}: one or more prompts, each a string or a list
 * of token ids (llama-server's also a list mixing ids and strings, or {@code {"prompt_string": ...}}).
 *
 * @param model        the model asked for; empty: the served one
 * @param prompts      the prompts, in order; each gets {@code params.n()} choices
 * @param returnTokens llama-server's {@code return_tokens}: the answer's token ids in {@code tokens}
 * @param textBiases   llama-server's {@code logit_bias} keyed by text: every token of the text gets the bias
 * @param responseFields llama-server's {@code response_fields}: the paths ({@code a/b}) of the answer's fields to
 *                     keep, each under its path; empty: the whole answer
 * @param verbose      llama-server's {@code verbose}: an OpenAI answer also carries {@code __verbose}
 */
record CompletionRequest(Optional<String> model, List<Prompt> prompts, GenerationParams params,
                         boolean returnTokens, Map<String, Float> textBiases, List<String> responseFields,
                         boolean verbose) {

    CompletionRequest {
        prompts = List.copyOf(prompts);
        responseFields = List.copyOf(responseFields);
    }

    /** A prompt as the client gave it. */
    sealed interface Prompt permits TextPrompt, TokenPrompt, MixedPrompt {
    }

    /** Text, tokenized with the model's leading special tokens and special-token text recognised. */
    record TextPrompt(String text) implements Prompt {
    }

    /** Token ids, used as given. */
    record TokenPrompt(int[] ids) implements Prompt {
    }

    /**
     * llama-server's one sequence of token ids (Integer) and texts (String): each text tokenized where it stands,
     * with the leading special tokens only when it comes first.
     */
    record MixedPrompt(List<Object> parts) implements Prompt {
        MixedPrompt {
            parts = List.copyOf(parts);
        }
    }

    /** {@code /v1/completions}. */
    static CompletionRequest read(JsonRequest r, RequestDefaults defaults) {
        return read(r, GenerationParams.Dialect.COMPLETIONS, prompts(r.raw("prompt")), defaults);
    }

    /** llama-server's {@code /completion}. */
    static CompletionRequest readNative(JsonRequest r, RequestDefaults defaults) {
        return read(r, GenerationParams.Dialect.NATIVE, nativePrompts(r.raw("prompt")), defaults);
    }

    /** llama-server's {@code /infill}: its fields as {@code /completion}'s, the prompt the infill layout made. */
    static CompletionRequest readInfill(JsonRequest r, RequestDefaults defaults, int[] prompt) {
        return read(r, GenerationParams.Dialect.NATIVE, List.of(new TokenPrompt(prompt)), defaults);
    }

    private static CompletionRequest read(JsonRequest r, GenerationParams.Dialect dialect, List<Prompt> prompts,
                                          RequestDefaults defaults) {
        GenerationParams params = GenerationParams.read(r, dialect, defaults);
        if (prompts.size() * params.n() > RequestBounds.CHOICES) {
            throw ApiException.invalidValue("n", "a request makes at most " + RequestBounds.CHOICES + " choices: its "
                    + prompts.size() + " prompts with n " + params.n() + " make " + prompts.size() * params.n());
        }
        boolean llama = dialect == GenerationParams.Dialect.NATIVE;
        return new CompletionRequest(r.string("model"), prompts, params, llama && r.bool("return_tokens").orElse(false),
                llama ? GenerationParams.logitBiasTexts(r) : Map.of(), llama ? responseFields(r) : List.of(),
                r.bool("verbose").orElse(false));
    }

    private static List<String> responseFields(JsonRequest r) {
        JsonNode node = r.raw("response_fields");
        if (node == null || node.isNull()) {
            return List.of();
        }
        List<String> fields = new ArrayList<>();
        for (JsonNode field : node.isArray() ? node : List.<JsonNode>of()) {
            if (!field.isTextual() || field.textValue().isEmpty()) {
                break;
            }
            fields.add(field.textValue());
        }
        if (!node.isArray() || fields.size() != node.size()) {
            throw ApiException.invalidType("response_fields", "response_fields must be a list of field paths");
        }
        return fields;
    }

    /**
     * llama-server's prompts: a string, {@code {"prompt_string"}}, a list holding a token id (one sequence, ids and
     * texts mixed), or a list of such prompts.
     */
    private static List<Prompt> nativePrompts(JsonNode node) {
        if (node == null) {
            throw ApiException.invalidValue("prompt", "prompt is required");
        }
        if (!node.isArray()) {
            return List.of(nativePrompt(node, "prompt"));
        }
        if (node.isEmpty()) {
            throw ApiException.invalidValue("prompt", "prompt must not be an empty list");
        }
        boolean sequence = false;
        for (JsonNode item : node) {
            sequence |= item.isNumber();
        }
        if (sequence) {
            return List.of(nativePrompt(node, "prompt"));
        }
        RequestBounds.atMost("prompt", node.size(), RequestBounds.PROMPTS, "prompts");
        List<Prompt> prompts = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            prompts.add(nativePrompt(node.get(i), "prompt[" + i + "]"));
        }
        return prompts;
    }

    private static Prompt nativePrompt(JsonNode node, String param) {
        String shape = param + " must be a string, {\"prompt_string\": ...}, or a list of token ids and strings";
        if (node.isTextual()) {
            return new TextPrompt(node.textValue());
        }
        if (node.isObject()) {
            if (node.hasNonNull("multimodal_data")) {
                throw ApiException.invalidValue(param + ".multimodal_data", "multimodal_data is not supported: the"
                        + " served models take text only");
            }
            JsonNode text = node.get("prompt_string");
            if (text == null || !text.isTextual()) {
                throw ApiException.invalidType(param + ".prompt_string", shape);
            }
            return new TextPrompt(text.textValue());
        }
        if (!node.isArray() || node.isEmpty()) {
            throw ApiException.invalidType(param, shape);
        }
        List<Object> parts = new ArrayList<>();
        boolean texts = false;
        for (JsonNode item : node) {
            if (item.isNumber()) {
                parts.add(JsonRequest.integer(item, param));
            } else if (item.isTextual()) {
                parts.add(item.textValue());
                texts = true;
            } else {
                throw ApiException.invalidType(param, shape);
            }
        }
        return texts ? new MixedPrompt(parts) : new TokenPrompt(tokenIds(node, param, shape));
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
        RequestBounds.atMost("prompt", node.size(), RequestBounds.PROMPTS, "prompts");
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
