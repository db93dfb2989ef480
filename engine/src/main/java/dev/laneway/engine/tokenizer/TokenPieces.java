package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The bytes each token stands for, the way llama.cpp renders a token: SentencePiece's {@code ▁} as a space,
 * {@code <0xNN>} tokens as the byte, byte-level BPE characters as their bytes, WordPiece continuations without
 * {@code ##} and word starts with a space; added tokens (special ones included) as their text. Worked out once from the
 * tokenizer's decoder, so streaming can emit tokens one by one and hold back bytes that do not yet form a character.
 */
final class TokenPieces {
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x([0-9A-Fa-f]{2})>");
    private static final byte[] EMPTY = new byte[0];

    private TokenPieces() {
    }

    /**
     * Every id's bytes.
     *
     * @throws IOException when a decoder step cannot be applied (a Replace pattern that is not a regular expression)
     */
    static byte[][] of(TokenizerJson tj) throws IOException {
        List<JsonNode> steps = new ArrayList<>();
        JsonNode decoder = tj.decoder();
        if (decoder.path("type").asText("").equals("Sequence")) {
            decoder.path("decoders").forEach(steps::add);
        } else if (decoder.isObject()) {
            steps.add(decoder);
        }
        List<Pattern> replacements = new ArrayList<>();
        for (JsonNode step : steps) {
            replacements.add(replacement(step));
        }
        byte[][] pieces = new byte[tj.texts.length][];
        for (int id = 0; id < pieces.length; id++) {
            String text = tj.texts[id];
            if (text == null) {
                pieces[id] = EMPTY;
            } else if (tj.added[id]) {
                pieces[id] = text.getBytes(StandardCharsets.UTF_8);
            } else {
                try {
                    pieces[id] = decode(text, steps, replacements);
                } catch (Unbounded e) {
                    throw new IOException("tokenizer.json: the decoder's Replace pattern " + e.pattern
                            + " reads token " + id + " more than " + e.reads + " times; a regular expression that"
                            + " backtracks without bound is refused");
                }
            }
        }
        return pieces;
    }

    /** The regular expression a Replace step replaces, compiled once for every token; null for other steps. */
    private static Pattern replacement(JsonNode step) throws IOException {
        JsonNode pattern = step.path("pattern");
        if (!step.path("type").asText("").equals("Replace") || pattern.has("String") || !pattern.has("Regex")) {
            return null;
        }
        try {
            return Pattern.compile(pattern.get("Regex").asText());
        } catch (PatternSyntaxException e) {
            throw new IOException("tokenizer.json: the decoder's Replace pattern " + pattern.get("Regex")
                    + " is not a regular expression: " + e.getDescription());
        }
    }

    private static byte[] decode(String token, List<JsonNode> steps, List<Pattern> replacements) {
        String s = token;
        for (int i = 0; i < steps.size(); i++) {
            JsonNode step = steps.get(i);
            switch (step.path("type").asText("")) {
                case "Replace" -> s = replace(s, step, replacements.get(i));
                case "ByteFallback" -> {
                    Matcher m = BYTE_TOKEN.matcher(s);
                    if (m.matches()) {
                        return new byte[]{(byte) Integer.parseInt(m.group(1), 16)};
                    }
                }
                case "ByteLevel" -> {
                    return ByteLevel.decode(s);
                }
                case "Metaspace" -> s = s.replace(step.path("replacement").asText("▁"), " ");
                case "WordPiece" -> {
                    String prefix = step.path("prefix").asText("##");
                    s = s.startsWith(prefix) ? s.substring(prefix.length()) : " " + s;
                }
                case "BPEDecoder" -> {
                    String suffix = step.path("suffix").asText("</w>");
                    s = s.endsWith(suffix) ? s.substring(0, s.length() - suffix.length()) + " " : s;
                }
                default -> {
                    // Fuse, Strip, CTC: they act on the whole sequence, not on one token.
                }
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String replace(String s, JsonNode step, Pattern regex) {
        JsonNode pattern = step.path("pattern");
        String content = step.path("content").asText("");
        if (pattern.has("String")) {
            return s.replace(pattern.get("String").asText(), content);
        }
        return regex == null ? s : regex.matcher(new Bounded(s, regex)).replaceAll(Matcher.quoteReplacement(content));
    }

    /**
     * A token's text as a regular expression reads it, a bounded number of times: a pattern from the file that
     * backtracks without bound (say {@code (a+)+$}) fails the load with {@link Unbounded} instead of stalling it.
     * A pattern that runs in time with the text reads each character a few times.
     */
    private static final class Bounded implements CharSequence {
        private final String text;
        private final Pattern pattern;
        private final long limit;
        private long reads;

        Bounded(String text, Pattern pattern) {
            this.text = text;
            this.pattern = pattern;
            this.limit = 4096 + 256L * text.length();
        }

        @Override
        public char charAt(int index) {
            if (++reads > limit) {
                throw new Unbounded(pattern.pattern(), limit);
            }
            return text.charAt(index);
        }

        @Override
        public int length() {
            return text.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return text.subSequence(start, end);
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** A pattern that read a token more than its bound. */
    private static final class Unbounded extends RuntimeException {
        final String pattern;
        final long reads;

        Unbounded(String pattern, long reads) {
            super(null, null, false, false);
            this.pattern = pattern;
            this.reads = reads;
        }
    }

    /** GPT-2's byte-level alphabet: every byte as a printable character. */
    static final class ByteLevel {
        private static final int[] BYTE_OF_CHAR = new int[324];

        static {
            java.util.Arrays.fill(BYTE_OF_CHAR, -1);
            int next = 256;
            for (int b = 0; b < 256; b++) {
                boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
                BYTE_OF_CHAR[printable ? b : next++] = b;
            }
        }

        private ByteLevel() {
        }

        /** The bytes of a byte-level token; a token with a character outside the alphabet stands for its UTF-8. */
        static byte[] decode(String token) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(token.length());
            for (int i = 0; i < token.length(); i++) {
                char c = token.charAt(i);
                if (c >= BYTE_OF_CHAR.length || BYTE_OF_CHAR[c] < 0) {
                    return token.getBytes(StandardCharsets.UTF_8);
                }
                out.write(BYTE_OF_CHAR[c]);
            }
            return out.toByteArray();
        }
    }
}
