package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.laneway.spi.ServedModel;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * llama-server's fill-in-the-middle prompt for {@code /infill}, in the repository-level layout code models are trained
 * on: {@code [FIM_REP]myproject\n}, then per extra chunk {@code [FIM_SEP]filename\n} and its text, then
 * {@code [FIM_SEP]filename\n}, then the model's leading special tokens (BOS) and
 * {@code [FIM_PRE]prefix prompt [FIM_SUF]suffix [FIM_MID]}; without the repository and file tokens, chunks are
 * separated by a {@code --- snippet ---} line. The model's tokens are found by their texts, as the model families
 * spell them; a model without prefix, suffix and middle tokens cannot fill in.
 */
final class InfillPrompt {

    private static final List<String> PRE = List.of("<|fim_prefix|>", "<fim_prefix>", "<fim-prefix>", "<PRE>",
            "▁<PRE>", "<｜fim▁begin｜>", "<|fim▁begin|>");
    private static final List<String> SUF = List.of("<|fim_suffix|>", "<fim_suffix>", "<fim-suffix>", "<SUF>",
            "▁<SUF>", "<｜fim▁hole｜>", "<|fim▁hole|>");
    private static final List<String> MID = List.of("<|fim_middle|>", "<fim_middle>", "<fim-middle>", "<MID>",
            "▁<MID>", "<｜fim▁end｜>", "<|fim▁end|>");
    private static final List<String> REP = List.of("<|repo_name|>", "<repo_name>", "<reponame>");
    private static final List<String> SEP = List.of("<|file_sep|>", "<file_sep>");

    /** A model's fill-in-the-middle tokens; the repository and file separators are optional. */
    record FimTokens(int pre, int suf, int mid, OptionalInt rep, OptionalInt sep) {
    }

    /** An extra chunk of context: another file's text. */
    record Extra(String filename, String text) {
    }

    private InfillPrompt() {
    }

    /** The model's fill-in-the-middle tokens, when it has prefix, suffix and middle tokens. */
    static Optional<FimTokens> tokens(ServedModel model) {
        OptionalInt pre = find(model, PRE);
        OptionalInt suf = find(model, SUF);
        OptionalInt mid = find(model, MID);
        if (pre.isEmpty() || suf.isEmpty() || mid.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new FimTokens(pre.getAsInt(), suf.getAsInt(), mid.getAsInt(), find(model, REP),
                find(model, SEP)));
    }

    private static OptionalInt find(ServedModel model, List<String> texts) {
        for (String text : texts) {
            // Vocabularies mark these as control or as user-defined tokens; either way the text is one token.
            int[] ids = model.tokenize(text, false, true);
            if (ids.length == 1) {
                return OptionalInt.of(ids[0]);
            }
        }
        return OptionalInt.empty();
    }

    /** The token ids of the infill prompt; texts are tokenized as text (their special-token spellings too). */
    static int[] build(ServedModel model, FimTokens fim, String prefix, String suffix, List<Extra> extra,
                       String prompt) {
        List<int[]> parts = new ArrayList<>();
        if (fim.rep().isPresent()) {
            parts.add(new int[]{fim.rep().getAsInt()});
            parts.add(text(model, "myproject\n"));
        }
        for (Extra chunk : extra) {
            if (fim.sep().isPresent()) {
                parts.add(new int[]{fim.sep().getAsInt()});
                parts.add(text(model, chunk.filename() + "\n"));
            } else {
                parts.add(text(model, "\n\n--- snippet ---\n\n"));
            }
            parts.add(text(model, chunk.text()));
        }
        if (fim.sep().isPresent()) {
            parts.add(new int[]{fim.sep().getAsInt()});
            parts.add(text(model, "filename\n"));
        }
        parts.add(model.tokenize("", true, false));
        parts.add(new int[]{fim.pre()});
        parts.add(text(model, prefix));
        parts.add(text(model, prompt));
        parts.add(new int[]{fim.suf()});
        parts.add(text(model, suffix));
        parts.add(new int[]{fim.mid()});
        return parts.stream().flatMapToInt(java.util.Arrays::stream).toArray();
    }

    private static int[] text(ServedModel model, String text) {
        return text.isEmpty() ? new int[0] : model.tokenize(text, false, false);
    }

    /** {@code input_extra}: a list of {@code {"filename", "text"}}; a missing file name is {@code tmp}. */
    static List<Extra> extra(JsonNode node) {
        List<Extra> extra = new ArrayList<>();
        if (node == null || node.isNull()) {
            return extra;
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("input_extra", "input_extra must be a list of {\"filename\", \"text\"}");
        }
        RequestBounds.atMost("input_extra", node.size(), RequestBounds.INFILL_EXTRA, "chunks");
        for (JsonNode chunk : node) {
            JsonNode text = chunk.get("text");
            JsonNode filename = chunk.get("filename");
            if (!chunk.isObject() || text == null || !text.isTextual()
                    || (filename != null && !filename.isTextual())) {
                throw ApiException.invalidType("input_extra", "each input_extra chunk must be {\"filename\": string,"
                        + " \"text\": string}");
            }
            extra.add(new Extra(filename == null ? "tmp" : filename.asText(), text.asText()));
        }
        return extra;
    }
}
