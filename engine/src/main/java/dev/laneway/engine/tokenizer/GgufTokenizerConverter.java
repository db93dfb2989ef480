package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufFile;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Turns a GGUF file's vocabulary into Hugging Face {@code tokenizer.json} and {@code tokenizer_config.json} files that
 * tokenize the way llama.cpp does with that GGUF:
 * <ul>
 *   <li>{@code llama} (SentencePiece): BPE with byte fallback over {@code <0xNN>} tokens, merges derived from the
 *       scores ({@link SentencePieceMerges}), spaces written as {@code ▁} and one put before the text (after each
 *       special token too) when {@code add_space_prefix} holds, as Hugging Face's Llama tokenizer does.</li>
 *   <li>{@code gpt2} (byte-level BPE): the file's merges, the pre-tokenizer {@code tokenizer.ggml.pre} names
 *       ({@link PreTokenizerRegexes}), byte-level decoding.</li>
 *   <li>{@code bert} (WordPiece): the vocabulary back in {@code ##} form (GGUF marks word starts with {@code ▁}
 *       instead), BERT's lower-casing normalizer and pre-tokenizer, {@code [CLS] ... [SEP]} around the text.</li>
 * </ul>
 * Control and unknown tokens become special added tokens (split out of text only when special tokens are parsed),
 * user-defined tokens plain added tokens (always split out), as llama.cpp treats them.
 */
public final class GgufTokenizerConverter {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** SentencePiece's visible space. */
    static final String SPACE = "▁";

    private GgufTokenizerConverter() {
    }

    /** Converts a GGUF file's tokenizer. */
    public static HfTokenizerFiles convert(GgufFile gguf) throws FormatException {
        return convert(GgufVocabulary.read(gguf), gguf.path());
    }

    /**
     * Converts a vocabulary read from {@code source}.
     *
     * @throws FormatException when the vocabulary is of a kind or pre-tokenizer this project does not know
     */
    public static HfTokenizerFiles convert(GgufVocabulary vocab, Path source) throws FormatException {
        ObjectNode tokenizer = switch (vocab.model()) {
            case "llama" -> sentencePiece(vocab, source);
            case "gpt2" -> byteLevel(vocab, source);
            case "bert" -> wordPiece(vocab);
            default -> throw new FormatException(source, "tokenizer.ggml.model '" + vocab.model()
                    + "' is not supported (supported: llama, gpt2, bert)");
        };
        return new HfTokenizerFiles(write(tokenizer), write(config(vocab)));
    }

    private static ObjectNode sentencePiece(GgufVocabulary vocab, Path source) throws FormatException {
        if (vocab.scores() == null) {
            throw new FormatException(source, "a llama (SentencePiece) vocabulary needs tokenizer.ggml.scores");
        }
        String[] texts = vocab.tokens();
        Map<String, Integer> ids = idsByText(texts);
        ArrayNode merges = NODES.arrayNode();
        for (SentencePieceMerges.Merge m : SentencePieceMerges.derive(texts, vocab.scores(), ids)) {
            merges.add(NODES.arrayNode().add(m.left()).add(m.right()));
        }
        ObjectNode root = root(vocab, texts);
        ArrayNode normalizers = NODES.arrayNode();
        if (vocab.addSpacePrefix()) {
            normalizers.addObject().put("type", "Prepend").put("prepend", SPACE);
        }
        normalizers.add(replace(" ", SPACE));
        root.putObject("normalizer").put("type", "Sequence").set("normalizers", normalizers);
        root.putNull("pre_tokenizer");
        root.set("post_processor", postProcessor(vocab));
        ArrayNode decoders = NODES.arrayNode();
        decoders.add(replace(SPACE, " "));
        decoders.addObject().put("type", "ByteFallback");
        decoders.addObject().put("type", "Fuse");
        if (vocab.addSpacePrefix()) {
            decoders.addObject().put("type", "Strip").put("content", " ").put("start", 1).put("stop", 0);
        }
        root.putObject("decoder").put("type", "Sequence").set("decoders", decoders);
        root.set("model", bpeModel(vocab, texts, merges, true, false));
        return root;
    }

    private static ObjectNode byteLevel(GgufVocabulary vocab, Path source) throws FormatException {
        if (vocab.merges() == null) {
            throw new FormatException(source, "a gpt2 (byte-level BPE) vocabulary needs tokenizer.ggml.merges");
        }
        List<String> regexes = PreTokenizerRegexes.forName(vocab.pre()).orElseThrow(() -> new FormatException(source,
                "tokenizer.ggml.pre '" + vocab.pre() + "' is not a known pre-tokenizer (known: "
                        + String.join(", ", PreTokenizerRegexes.names()) + ")"));
        String[] texts = vocab.tokens();
        Map<String, Integer> ids = idsByText(texts);
        ArrayNode merges = NODES.arrayNode();
        String[] mergeTexts = vocab.merges();
        for (int rank = 0; rank < mergeTexts.length; rank++) {
            merges.add(splitMerge(mergeTexts[rank], ids, source, rank));
        }
        ObjectNode root = root(vocab, texts);
        root.putNull("normalizer");
        ArrayNode steps = NODES.arrayNode();
        for (String regex : regexes) {
            ObjectNode split = steps.addObject().put("type", "Split");
            split.putObject("pattern").put("Regex", regex);
            split.put("behavior", "Isolated").put("invert", false);
        }
        steps.addObject().put("type", "ByteLevel").put("add_prefix_space", false).put("trim_offsets", true)
                .put("use_regex", false);
        root.putObject("pre_tokenizer").put("type", "Sequence").set("pretokenizers", steps);
        root.set("post_processor", postProcessor(vocab));
        root.putObject("decoder").put("type", "ByteLevel").put("add_prefix_space", true).put("trim_offsets", true)
                .put("use_regex", true);
        root.set("model", bpeModel(vocab, texts, merges, false, PreTokenizerRegexes.ignoresMerges(vocab.pre())));
        return root;
    }

    /** A merge {@code "left right"}; the split is at the space that leaves a token on each side. */
    private static ArrayNode splitMerge(String merge, Map<String, Integer> ids, Path source, int rank)
            throws FormatException {
        for (int at = merge.indexOf(' '); at >= 0; at = merge.indexOf(' ', at + 1)) {
            String left = merge.substring(0, at);
            String right = merge.substring(at + 1);
            if (ids.containsKey(left) && ids.containsKey(right)) {
                return NODES.arrayNode().add(left).add(right);
            }
        }
        throw new FormatException(source, "tokenizer.ggml.merges[" + rank + "] '" + merge
                + "' is not two tokens separated by a space");
    }

    private static ObjectNode wordPiece(GgufVocabulary vocab) {
        String[] texts = new String[vocab.size()];
        for (int i = 0; i < texts.length; i++) {
            texts[i] = wordPieceText(vocab.tokens()[i]);
        }
        ObjectNode root = root(vocab, texts);
        root.putObject("normalizer").put("type", "BertNormalizer").put("clean_text", true)
                .put("handle_chinese_chars", true).putNull("strip_accents").put("lowercase", true);
        root.putObject("pre_tokenizer").put("type", "BertPreTokenizer");
        root.set("post_processor", postProcessor(vocab));
        root.putObject("decoder").put("type", "WordPiece").put("prefix", "##").put("cleanup", true);
        ObjectNode model = NODES.objectNode().put("type", "WordPiece");
        putTokenOrNull(model, "unk_token", vocab.unk(), texts);
        model.put("continuing_subword_prefix", "##").put("max_input_chars_per_word", 100);
        model.set("vocab", vocabMap(texts));
        root.set("model", model);
        return root;
    }

    /**
     * A WordPiece token as BERT writes it: GGUF stores word-initial pieces with a leading {@code ▁} and continuations
     * bare; bracketed specials ({@code [CLS]}) are left alone.
     */
    static String wordPieceText(String ggufText) {
        if (ggufText.startsWith(SPACE)) {
            return ggufText.substring(SPACE.length());
        }
        if (ggufText.startsWith("[") && ggufText.endsWith("]")) {
            return ggufText;
        }
        return "##" + ggufText;
    }

    private static ObjectNode root(GgufVocabulary vocab, String[] texts) {
        ObjectNode root = NODES.objectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        root.set("added_tokens", addedTokens(vocab, texts));
        return root;
    }

    /**
     * Control and unknown tokens as special added tokens, user-defined ones as plain added tokens. Phi-3 models
     * swallow the whitespace after their special tokens, as llama.cpp marks them.
     */
    private static ArrayNode addedTokens(GgufVocabulary vocab, String[] texts) {
        boolean phi3 = vocab.modelName().contains("phi-3") || vocab.modelName().contains("phi3");
        Set<String> phi3Kept = Set.of("<unk>", "<s>", "<|endoftext|>");
        ArrayNode added = NODES.arrayNode();
        for (int id = 0; id < texts.length; id++) {
            GgufTokenType type = vocab.types()[id];
            boolean special = type == GgufTokenType.CONTROL || type == GgufTokenType.UNKNOWN;
            if (!special && type != GgufTokenType.USER_DEFINED) {
                continue;
            }
            boolean rstrip = phi3 && (special || type == GgufTokenType.USER_DEFINED || texts[id].equals("</s>"))
                    && !phi3Kept.contains(texts[id]);
            added.addObject().put("id", id).put("content", texts[id]).put("single_word", false)
                    .put("lstrip", false).put("rstrip", rstrip).put("normalized", false).put("special", special);
        }
        return added;
    }

    private static ObjectNode bpeModel(GgufVocabulary vocab, String[] texts, ArrayNode merges, boolean byteFallback,
                                       boolean ignoreMerges) {
        ObjectNode model = NODES.objectNode().put("type", "BPE").putNull("dropout");
        putTokenOrNull(model, "unk_token", byteFallback ? vocab.unk() : OptionalInt.empty(), texts);
        model.putNull("continuing_subword_prefix").putNull("end_of_word_suffix");
        model.put("fuse_unk", byteFallback).put("byte_fallback", byteFallback).put("ignore_merges", ignoreMerges);
        model.set("vocab", vocabMap(texts));
        model.set("merges", merges);
        return model;
    }

    private static ObjectNode vocabMap(String[] texts) {
        Map<String, Integer> ids = idsByText(texts);
        ObjectNode map = NODES.objectNode();
        for (int id = 0; id < texts.length; id++) {
            if (ids.get(texts[id]) == id) {
                map.put(texts[id], id);
            }
        }
        return map;
    }

    /**
     * The id of each token text. Where a text repeats, the last id wins, as in llama.cpp; the earlier ones can be
     * decoded but are never produced.
     */
    static Map<String, Integer> idsByText(String[] texts) {
        Map<String, Integer> ids = new HashMap<>(texts.length * 2);
        for (int id = 0; id < texts.length; id++) {
            ids.put(texts[id], id);
        }
        return ids;
    }

    /** BOS and EOS around the text, as {@code add_bos_token} and {@code add_eos_token} say; null when neither. */
    private static ObjectNode postProcessor(GgufVocabulary vocab) {
        boolean bos = vocab.addBos() && vocab.bos().isPresent();
        boolean eos = vocab.addEos() && vocab.eos().isPresent();
        if (!bos && !eos) {
            return null;
        }
        String[] texts = vocab.model().equals("bert") ? null : vocab.tokens();
        String bosText = bos ? text(vocab, vocab.bos().getAsInt(), texts) : null;
        String eosText = eos ? text(vocab, vocab.eos().getAsInt(), texts) : null;
        ObjectNode p = NODES.objectNode().put("type", "TemplateProcessing");
        template(p.putArray("single"), bosText, "A", 0, eosText);
        ArrayNode pair = p.putArray("pair");
        template(pair, bosText, "A", 0, eosText);
        template(pair, bosText, "B", 1, eosText);
        ObjectNode specials = p.putObject("special_tokens");
        if (bosText != null) {
            specialToken(specials, bosText, vocab.bos().getAsInt());
        }
        if (eosText != null) {
            specialToken(specials, eosText, vocab.eos().getAsInt());
        }
        return p;
    }

    private static void template(ArrayNode pieces, String bosText, String sequence, int typeId, String eosText) {
        if (bosText != null) {
            pieces.addObject().putObject("SpecialToken").put("id", bosText).put("type_id", typeId);
        }
        pieces.addObject().putObject("Sequence").put("id", sequence).put("type_id", typeId);
        if (eosText != null) {
            pieces.addObject().putObject("SpecialToken").put("id", eosText).put("type_id", typeId);
        }
    }

    private static void specialToken(ObjectNode specials, String text, int id) {
        ObjectNode t = specials.putObject(text).put("id", text);
        t.putArray("ids").add(id);
        t.putArray("tokens").add(text);
    }

    private static ObjectNode config(GgufVocabulary vocab) {
        String[] texts = vocab.model().equals("bert") ? null : vocab.tokens();
        ObjectNode c = NODES.objectNode();
        c.put("add_bos_token", vocab.addBos());
        c.put("add_eos_token", vocab.addEos());
        putTokenIfPresent(c, "bos_token", vocab.bos(), vocab, texts);
        putTokenIfPresent(c, "eos_token", vocab.eos(), vocab, texts);
        putTokenIfPresent(c, "unk_token", vocab.unk(), vocab, texts);
        putTokenIfPresent(c, "pad_token", vocab.pad(), vocab, texts);
        c.put("clean_up_tokenization_spaces", false);
        c.put("tokenizer_class", "PreTrainedTokenizerFast");
        if (vocab.rankTemplate().isEmpty()) {
            vocab.chatTemplate().ifPresent(t -> c.put("chat_template", t));
        } else {
            // Hugging Face's list of named templates, which keeps the reranker's prompt beside the chat's
            var named = c.putArray("chat_template");
            vocab.chatTemplate().ifPresent(t -> named.addObject().put("name", "default").put("template", t));
            named.addObject().put("name", "rerank").put("template", vocab.rankTemplate().get());
        }
        return c;
    }

    private static void putTokenIfPresent(ObjectNode node, String key, OptionalInt id, GgufVocabulary vocab,
                                          String[] texts) {
        if (id.isPresent()) {
            node.put(key, text(vocab, id.getAsInt(), texts));
        }
    }

    private static void putTokenOrNull(ObjectNode node, String key, OptionalInt id, String[] texts) {
        if (id.isPresent()) {
            node.put(key, texts[id.getAsInt()]);
        } else {
            node.putNull(key);
        }
    }

    /** A token's text in the converted vocabulary. */
    private static String text(GgufVocabulary vocab, int id, String[] texts) {
        return texts != null ? texts[id] : wordPieceText(vocab.tokens()[id]);
    }

    private static ObjectNode replace(String pattern, String content) {
        ObjectNode r = NODES.objectNode().put("type", "Replace");
        r.putObject("pattern").put("String", pattern);
        r.put("content", content);
        return r;
    }

    private static String write(ObjectNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
