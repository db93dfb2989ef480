package dev.laneway.engine.tokenizer;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * A model's tokenizer: Hugging Face {@code tokenizer.json} semantics, run by the Hugging Face tokenizers library.
 *
 * <p>Special tokens ({@link #encode}'s {@code addSpecial}) are the BOS/EOS that {@code tokenizer_config.json}'s
 * {@code add_bos_token}/{@code add_eos_token} ask for, else those of the tokenizer's post-processor. Text that spells a
 * special token (say {@code <|im_end|>}) becomes that token only with {@code parseSpecial}; without it the text is
 * tokenized as text, like llama.cpp's {@code parse_special = false}. The library has no switch for that, so a second
 * tokenizer without the special added tokens does that encoding.
 *
 * <p>Thread-safe. Holds native memory: {@link #close()} it.
 */
public final class TextTokenizer implements AutoCloseable, dev.laneway.spi.TokenCodec {
    /** Texts of special tokens that end a turn, as llama.cpp recognises them. */
    private static final Set<String> END_OF_TURN = Set.of("<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>",
            "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<|end_of_text|>",
            "<|return|>", "<|call|>");

    private final HuggingFaceTokenizer withSpecial;
    /** {@code tokenizer.json} when it has special added tokens, for {@link #plain()}; null when it has none. */
    private final String withSpecialJson;
    /**
     * The tokenizer without the special added tokens, made on first use (its {@code tokenizer.json} too: writing
     * it out took a tenth of a second of loading); {@link #withSpecial} itself when there are none.
     */
    private volatile HuggingFaceTokenizer plain;
    private boolean closed;
    private final String[] texts;
    private final boolean[] special;
    private final byte[][] pieces;
    private final int[] prefix;
    private final int[] suffix;
    private final OptionalInt bos;
    private final OptionalInt eos;
    private final Set<Integer> endOfGeneration;
    private final Optional<String> chatTemplate;
    private final Optional<String> rankTemplate;
    private final Set<String> specialTexts;

    private TextTokenizer(String json, TokenizerJson tj, TokenizerConfig config, Set<Integer> extraEndIds,
                          HuggingFaceTokenizer withSpecial) throws IOException {
        this.withSpecial = withSpecial;
        this.withSpecialJson = tj.hasSpecialAddedTokens() ? json : null;
        this.plain = withSpecialJson == null ? withSpecial : null;
        this.texts = tj.texts;
        this.special = tj.special;
        this.pieces = TokenPieces.of(tj);
        this.bos = config.bosToken().map(t -> lookup(tj, t)).orElseGet(() -> tj.prefix.length == 1
                ? OptionalInt.of(tj.prefix[0]) : OptionalInt.empty());
        this.eos = config.eosToken().map(t -> lookup(tj, t)).orElseGet(() -> tj.suffix.length == 1
                ? OptionalInt.of(tj.suffix[0]) : OptionalInt.empty());
        this.prefix = config.addBosToken().map(add -> add && bos.isPresent() ? new int[]{bos.getAsInt()} : new int[0])
                .orElse(tj.prefix);
        this.suffix = config.addEosToken().map(add -> add && eos.isPresent() ? new int[]{eos.getAsInt()} : new int[0])
                .orElse(tj.suffix);
        Set<Integer> end = new TreeSet<>(extraEndIds);
        eos.ifPresent(end::add);
        for (int id = 0; id < texts.length; id++) {
            if (special[id] && END_OF_TURN.contains(texts[id])) {
                end.add(id);
            }
        }
        this.endOfGeneration = Collections.unmodifiableSet(end);
        this.chatTemplate = config.chatTemplate();
        this.rankTemplate = config.rankTemplate();
        Set<String> specials = new java.util.HashSet<>();
        for (int id = 0; id < texts.length; id++) {
            if (special[id] && texts[id] != null && !texts[id].isEmpty()) {
                specials.add(texts[id]);
            }
        }
        this.specialTexts = Set.copyOf(specials);
    }

    /**
     * A tokenizer from the text of its files.
     *
     * @param tokenizerJson       {@code tokenizer.json}
     * @param tokenizerConfigJson {@code tokenizer_config.json}, or null
     * @throws IOException when either is not what it should be
     */
    public static TextTokenizer fromJson(String tokenizerJson, String tokenizerConfigJson) throws IOException {
        TokenizerConfig config = tokenizerConfigJson == null ? TokenizerConfig.EMPTY
                : TokenizerConfig.parse(tokenizerConfigJson);
        return create(tokenizerJson, config, Set.of());
    }

    static TextTokenizer create(String tokenizerJson, TokenizerConfig config, Set<Integer> extraEndIds)
            throws IOException {
        // The native library starts and reads the file on another thread while this one reads what it needs.
        BackgroundResult<HuggingFaceTokenizer> withSpecial = BackgroundResult.start("laneway-tokenizer-native",
                () -> NativeTokenizers.fromJson(tokenizerJson));
        try {
            TokenizerJson tj = TokenizerJson.parse(tokenizerJson);
            return new TextTokenizer(tokenizerJson, tj, config, extraEndIds, withSpecial.get());
        } catch (IOException | RuntimeException e) {
            withSpecial.discard(HuggingFaceTokenizer::close);
            throw e;
        }
    }

    private static OptionalInt lookup(TokenizerJson tj, String text) {
        Integer id = tj.ids.get(text);
        return id == null ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /**
     * Tokenizes a text.
     *
     * @param addSpecial   whether to add the BOS/EOS the tokenizer adds around a text
     * @param parseSpecial whether text spelling a special token becomes that token
     */
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        int[] body = text.isEmpty() ? new int[0] : tokenize(wellFormed(text), parseSpecial ? withSpecial : plain());
        if (!addSpecial || (prefix.length == 0 && suffix.length == 0)) {
            return body;
        }
        int[] out = new int[prefix.length + body.length + suffix.length];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        System.arraycopy(body, 0, out, prefix.length, body.length);
        System.arraycopy(suffix, 0, out, prefix.length + body.length, suffix.length);
        return out;
    }

    /** The tokenizer that reads special-token text as text; most callers never need it, so it is made lazily. */
    private HuggingFaceTokenizer plain() {
        HuggingFaceTokenizer p = plain;
        if (p == null) {
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the tokenizer is closed");
                }
                p = plain;
                if (p == null) {
                    try {
                        p = NativeTokenizers.fromJson(TokenizerJson.parse(withSpecialJson).withoutSpecialTokens());
                    } catch (IOException e) {
                        // The same file as the one already loaded, less some added tokens: cannot be malformed.
                        throw new IllegalStateException("could not load the tokenizer without special tokens", e);
                    }
                    plain = p;
                }
            }
        }
        return p;
    }

    private static int[] tokenize(String text, HuggingFaceTokenizer tokenizer) {
        Encoding encoding = tokenizer.encode(text, false, false);
        long[] ids = encoding.getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = (int) ids[i];
        }
        return out;
    }

    /** The text with unpaired surrogates (not Unicode, so not encodable) replaced by U+FFFD. */
    static String wellFormed(String s) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1));
            boolean lone = Character.isSurrogate(c) && !paired;
            if (lone && out == null) {
                out = new StringBuilder(s.length()).append(s, 0, i);
            }
            if (out != null) {
                out.append(lone ? '\uFFFD' : c);
                if (paired) {
                    out.append(s.charAt(++i));
                }
            } else if (paired) {
                i++;
            }
        }
        return out == null ? s : out.toString();
    }

    /**
     * The text of tokens as llama-server shows it ({@code /detokenize}, completion text): each token's bytes
     * ({@link #tokenBytes}) in a row, special tokens as their text, nothing dropped, then read as UTF-8 (malformed
     * bytes as U+FFFD).
     *
     * @throws IllegalArgumentException for an id outside the vocabulary
     */
    public String decode(int[] ids) {
        int length = 0;
        for (int id : ids) {
            length += piece(id).length;
        }
        byte[] all = new byte[length];
        int at = 0;
        for (int id : ids) {
            byte[] p = pieces[id];
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return new String(all, StandardCharsets.UTF_8);
    }

    /**
     * The text tokens came from, as Hugging Face's {@code decode} gives it (special tokens kept): the inverse of
     * {@link #encode}, so without the space a SentencePiece tokenizer puts before the text.
     *
     * @throws IllegalArgumentException for an id outside the vocabulary
     */
    public String detokenize(int[] ids) {
        long[] longs = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            piece(ids[i]);
            longs[i] = ids[i];
        }
        return ids.length == 0 ? "" : withSpecial.decode(longs, false);
    }

    /** The bytes a token stands for (see {@link #decode}); a byte token's piece is not UTF-8 on its own. */
    public byte[] tokenBytes(int id) {
        return piece(id).clone();
    }

    private byte[] piece(int id) {
        if (id < 0 || id >= pieces.length || texts[id] == null) {
            throw new IllegalArgumentException("token id " + id + " is not in the vocabulary (ids 0 to "
                    + (pieces.length - 1) + ")");
        }
        return pieces[id];
    }

    /** The token's text as the vocabulary spells it (e.g. {@code ▁Hello}, {@code Ġthe}, {@code <0x0A>}). */
    public String tokenText(int id) {
        piece(id);
        return texts[id];
    }

    /** Whether the token is a special (control) token. */
    public boolean isSpecial(int id) {
        piece(id);
        return special[id];
    }

    @Override
    public Set<String> specialTexts() {
        return specialTexts;
    }

    /** One more than the largest token id. */
    public int vocabSize() {
        return texts.length;
    }

    public OptionalInt bosId() {
        return bos;
    }

    public OptionalInt eosId() {
        return eos;
    }

    /** Whether {@code encode(text, true, ...)} starts with BOS. */
    public boolean addsBos() {
        return bos.isPresent() && prefix.length > 0 && prefix[0] == bos.getAsInt();
    }

    /** The ids {@code encode} puts before and after a text when asked for special tokens. */
    public int[] specialPrefix() {
        return prefix.clone();
    }

    public int[] specialSuffix() {
        return suffix.clone();
    }

    /** Tokens after which generation stops: EOS and the special end-of-turn tokens the vocabulary has. */
    public Set<Integer> endOfGenerationIds() {
        return endOfGeneration;
    }

    /** The model's chat template source, if it has one. */
    public Optional<String> chatTemplateSource() {
        return chatTemplate;
    }

    /** A reranker's prompt, {@code {query}} and {@code {document}} in place of its texts, if the model has one. */
    public Optional<String> rankTemplate() {
        return rankTemplate;
    }

    /** The model's chat template, or the ChatML default; with this tokenizer's BOS and EOS text. */
    public ChatTemplate chatTemplate() {
        return chatTemplate(Optional.empty());
    }

    /** {@code override} when given, else {@link #chatTemplate()}. */
    public ChatTemplate chatTemplate(Optional<String> override) {
        String bosText = bos.isPresent() ? texts[bos.getAsInt()] : "";
        String eosText = eos.isPresent() ? texts[eos.getAsInt()] : "";
        return override.or(() -> chatTemplate).map(t -> new ChatTemplate(t, bosText, eosText))
                .orElseGet(() -> ChatTemplate.chatMl(bosText, eosText));
    }

    @Override
    public synchronized void close() {
        closed = true;
        HuggingFaceTokenizer p = plain;
        if (p != null && p != withSpecial) {
            p.close();
        }
        withSpecial.close();
    }

    @Override
    public String toString() {
        return "TextTokenizer[" + texts.length + " tokens, bos=" + bos + ", eos=" + eos + ", prefix="
                + Arrays.toString(prefix) + ", suffix=" + Arrays.toString(suffix) + "]";
    }
}
