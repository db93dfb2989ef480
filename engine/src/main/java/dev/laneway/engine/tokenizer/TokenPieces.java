package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    static byte[][] of(TokenizerJson tj) {
        List<JsonNode> steps = new ArrayList<>();
        JsonNode decoder = tj.decoder();
        if (decoder.path("type").asText("").equals("Sequence")) {
            decoder.path("decoders").forEach(steps::add);
        } else if (decoder.isObject()) {
            steps.add(decoder);
        }
        byte[][] pieces = new byte[tj.texts.length][];
        for (int id = 0; id < pieces.length; id++) {
            String text = tj.texts[id];
            if (text == null) {
                pieces[id] = EMPTY;
            } else if (tj.added[id]) {
                pieces[id] = text.getBytes(StandardCharsets.UTF_8);
            } else {
                pieces[id] = decode(text, steps);
            }
        }
        return pieces;
    }

    private static byte[] decode(String token, List<JsonNode> steps) {
        String s = token;
        for (JsonNode step : steps) {
            switch (step.path("type").asText("")) {
                case "Replace" -> s = replace(s, step);
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

    private static String replace(String s, JsonNode step) {
        JsonNode pattern = step.path("pattern");
        String content = step.path("content").asText("");
        if (pattern.has("String")) {
            return s.replace(pattern.get("String").asText(), content);
        }
        if (pattern.has("Regex")) {
            return Pattern.compile(pattern.get("Regex").asText()).matcher(s).replaceAll(Matcher.quoteReplacement(content));
        }
        return s;
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
