package dev.laneway.engine.tokenizer;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;

import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A GGUF file's tokenizer: the {@code tokenizer.ggml.*} keys, checked for consistency.
 *
 * @param model          {@code tokenizer.ggml.model}: {@code llama} (SentencePiece BPE), {@code gpt2} (byte-level
 *                       BPE) or {@code bert} (WordPiece)
 * @param pre            {@code tokenizer.ggml.pre}, the pre-tokenizer name of a {@code gpt2} vocabulary
 *                       ({@code default} when absent)
 * @param tokens         the token texts, by id
 * @param scores         the SentencePiece scores, by id ({@code null} when absent)
 * @param types          the token types, by id
 * @param merges         the byte-level BPE merges, {@code "left right"}, by rank ({@code null} when absent)
 * @param bos            the BOS (for {@code bert}: CLS) token id
 * @param eos            the EOS (for {@code bert}: SEP) token id
 * @param unk            the unknown token id
 * @param pad            the padding token id
 * @param addBos         whether encoding with special tokens starts with BOS
 * @param addEos         whether encoding with special tokens ends with EOS
 * @param addSpacePrefix whether a SentencePiece vocabulary puts a space before the text
 * @param chatTemplate   {@code tokenizer.chat_template}
 * @param rankTemplate   {@code tokenizer.chat_template.rerank}: a reranker's prompt, {@code {query}} and
 *                       {@code {document}} in place of the query and a document
 * @param modelName      {@code general.name}, lower-cased ({@code ""} when absent)
 */
public record GgufVocabulary(String model, String pre, String[] tokens, float[] scores, GgufTokenType[] types,
                             String[] merges, OptionalInt bos, OptionalInt eos, OptionalInt unk, OptionalInt pad,
                             boolean addBos, boolean addEos, boolean addSpacePrefix, Optional<String> chatTemplate,
                             Optional<String> rankTemplate, String modelName) {

    /** Reads and checks the tokenizer keys of a GGUF file. */
    public static GgufVocabulary read(GgufFile gguf) throws FormatException {
        String model = gguf.string("tokenizer.ggml.model").orElseThrow(() -> new FormatException(gguf.path(),
                "no tokenizer: the key tokenizer.ggml.model is missing"));
        String[] tokens = strings(gguf, "tokenizer.ggml.tokens")
                .orElseThrow(() -> new FormatException(gguf.path(), "the key tokenizer.ggml.tokens is missing"));
        int n = tokens.length;
        if (n == 0) {
            throw new FormatException(gguf.path(), "tokenizer.ggml.tokens is empty");
        }
        float[] scores = floats(gguf, "tokenizer.ggml.scores", n);
        GgufTokenType[] types = types(gguf, n);
        String[] merges = strings(gguf, "tokenizer.ggml.merges").orElse(null);
        boolean spm = model.equals("llama");
        boolean wordPiece = model.equals("bert");
        return new GgufVocabulary(model,
                gguf.string("tokenizer.ggml.pre").orElse("default"),
                tokens, scores, types, merges,
                tokenId(gguf, "tokenizer.ggml.bos_token_id", n,
                        wordPiece ? "tokenizer.ggml.cls_token_id" : null),
                tokenId(gguf, "tokenizer.ggml.eos_token_id", n,
                        wordPiece ? "tokenizer.ggml.seperator_token_id" : null),
                tokenId(gguf, "tokenizer.ggml.unknown_token_id", n, null),
                tokenId(gguf, "tokenizer.ggml.padding_token_id", n, null),
                // Defaults as llama.cpp has them: SentencePiece and WordPiece add BOS (CLS), WordPiece adds SEP too.
                gguf.bool("tokenizer.ggml.add_bos_token").orElse(spm || wordPiece),
                gguf.bool("tokenizer.ggml.add_eos_token").orElse(wordPiece),
                gguf.bool("tokenizer.ggml.add_space_prefix").orElse(spm),
                gguf.string("tokenizer.chat_template"),
                gguf.string("tokenizer.chat_template.rerank"),
                gguf.string("general.name").orElse("").toLowerCase(Locale.ROOT));
    }

    /** The number of tokens. */
    public int size() {
        return tokens.length;
    }

    private static Optional<String[]> strings(GgufFile gguf, String key) throws FormatException {
        Optional<GgufArray> a = gguf.array(key);
        if (a.isEmpty()) {
            return Optional.empty();
        }
        if (!(a.get().values() instanceof String[] s)) {
            throw new FormatException(gguf.path(), key + " is an array of " + a.get().elementType()
                    + ", expected strings");
        }
        return Optional.of(s);
    }

    private static float[] floats(GgufFile gguf, String key, int n) throws FormatException {
        Optional<GgufArray> a = gguf.array(key);
        if (a.isEmpty()) {
            return null;
        }
        Object v = a.get().values();
        float[] out;
        if (v instanceof float[] f) {
            out = f;
        } else if (v instanceof double[] d) {
            out = new float[d.length];
            for (int i = 0; i < d.length; i++) {
                out[i] = (float) d[i];
            }
        } else {
            throw new FormatException(gguf.path(), key + " is an array of " + a.get().elementType()
                    + ", expected floats");
        }
        checkLength(gguf, key, out.length, n);
        return out;
    }

    private static GgufTokenType[] types(GgufFile gguf, int n) throws FormatException {
        String key = "tokenizer.ggml.token_type";
        GgufTokenType[] out = new GgufTokenType[n];
        Optional<GgufArray> a = gguf.array(key);
        if (a.isEmpty()) {
            java.util.Arrays.fill(out, GgufTokenType.NORMAL);
            return out;
        }
        Object v = a.get().values();
        checkLength(gguf, key, a.get().length(), n);
        for (int i = 0; i < n; i++) {
            if (v instanceof int[] ints) {
                out[i] = GgufTokenType.of(ints[i]);
            } else if (v instanceof long[] longs) {
                out[i] = GgufTokenType.of(longs[i]);
            } else {
                throw new FormatException(gguf.path(), key + " is an array of " + a.get().elementType()
                        + ", expected integers");
            }
        }
        return out;
    }

    private static void checkLength(GgufFile gguf, String key, int length, int n) throws FormatException {
        if (length != n) {
            throw new FormatException(gguf.path(), key + " has " + length + " entries, tokenizer.ggml.tokens has "
                    + n);
        }
    }

    /** A token id; absent when missing, or outside the vocabulary (0xFFFFFFFF is how files say "none"). */
    private static OptionalInt tokenId(GgufFile gguf, String key, int n, String fallbackKey) {
        Optional<Long> id = gguf.integer(key);
        if (id.isEmpty() && fallbackKey != null) {
            id = gguf.integer(fallbackKey);
        }
        return id.filter(v -> v >= 0 && v < n).map(v -> OptionalInt.of(v.intValue())).orElse(OptionalInt.empty());
    }
}
