package dev.laneway.runtime.api;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.ServedModel;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A conversation's prompt, in which only the chat template's own text yields special tokens. Where a client wrote
 * the text of a special token (a turn marker such as {@code <|im_start|>} in a message, a tool's description or a
 * template variable), that text is tokenized as text, so that no client can forge a turn, a system message or an end
 * of text: what a client sends is data.
 *
 * <p>Before rendering, each such text in the client's strings is swapped for a marker (private-use characters around
 * a nonce no client can guess); after rendering, the special tokens outside the markers are the template's, and the
 * text between them, each marker back to the text it hides, is tokenized as text. A conversation that spells no
 * special token is tokenized whole, as the tokenizer reads it.
 *
 * @param text the conversation as the template renders it, the client's text in place
 * @param ids  its tokens, after the model's leading special tokens
 */
record ChatPrompt(String text, int[] ids) {
    private static final char OPEN = '\uE000';
    private static final char CLOSE = '\uE001';
    private static final SecureRandom NONCES = new SecureRandom();

    /** What the template is asked to render: the conversation and the extra variables, either of them masked. */
    interface Renderer {
        String render(List<ChatMessage> messages, Map<String, Object> variables);
    }

    /**
     * Renders and tokenizes a conversation.
     *
     * @throws dev.laneway.spi.InvalidRequestException as the template or tokenizer refuse it
     */
    static ChatPrompt of(ServedModel model, List<ChatMessage> messages, Map<String, Object> variables,
                         Renderer template) {
        Mask mask = new Mask(model.specialTokenTexts());
        List<ChatMessage> masked = messages.stream().map(mask::message).toList();
        @SuppressWarnings("unchecked")
        Map<String, Object> maskedVariables = (Map<String, Object>) mask.value(variables);
        String rendered = template.render(masked, maskedVariables);
        if (mask.hidden.isEmpty()) {
            return new ChatPrompt(rendered, model.tokenize(rendered, true, true));
        }
        return mask.tokenize(model, rendered);
    }

    /** The client's strings with each special token's text hidden behind a marker, and what each marker hides. */
    private static final class Mask {
        /** Special texts by their first character, longest first, so that the longest match wins. */
        private final Map<Character, List<String>> byFirst = new HashMap<>();
        private final String nonce = HexFormat.of().formatHex(NONCES.generateSeed(8));
        private final List<String> hidden = new ArrayList<>();

        Mask(Set<String> specials) {
            for (String s : specials) {
                byFirst.computeIfAbsent(s.charAt(0), c -> new ArrayList<>()).add(s);
            }
            byFirst.values().forEach(l -> l.sort(Comparator.comparingInt(String::length).reversed()));
        }

        ChatMessage message(ChatMessage m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> fields = (Map<String, Object>) value(m.fields());
            return new ChatMessage(m.role(), m.content() == null ? null : text(m.content()), fields);
        }

        /** A JSON-like value (maps, lists, strings, numbers, booleans, nulls) with its strings masked. */
        Object value(Object v) {
            if (v instanceof String s) {
                return text(s);
            }
            if (v instanceof Map<?, ?> map) {
                Map<Object, Object> out = new LinkedHashMap<>();
                map.forEach((k, x) -> out.put(k instanceof String s ? text(s) : k, value(x)));
                return out;
            }
            if (v instanceof List<?> list) {
                return list.stream().map(this::value).toList();
            }
            return v;
        }

        String text(String s) {
            StringBuilder out = null;
            for (int i = 0; i < s.length(); ) {
                String found = special(s, i);
                if (found == null) {
                    if (out != null) {
                        out.append(s.charAt(i));
                    }
                    i++;
                    continue;
                }
                if (out == null) {
                    out = new StringBuilder(s.length() + 32).append(s, 0, i);
                }
                out.append(OPEN).append(nonce).append(hidden.size()).append(CLOSE);
                hidden.add(found);
                i += found.length();
            }
            return out == null ? s : out.toString();
        }

        private String special(String s, int at) {
            List<String> candidates = byFirst.get(s.charAt(at));
            if (candidates != null) {
                for (String c : candidates) {
                    if (s.startsWith(c, at)) {
                        return c;
                    }
                }
            }
            return null;
        }

        /**
         * The rendering's tokens, split where the template's own special tokens stand (as a tokenizer splits at every
         * special token); the pieces between them, the client's text back in place, are tokenized as text.
         */
        ChatPrompt tokenize(ServedModel model, String rendered) {
            Matcher marker = Pattern.compile(OPEN + nonce + "(\\d+)" + CLOSE).matcher(rendered);
            StringBuilder text = new StringBuilder(rendered.length());
            StringBuilder piece = new StringBuilder();
            List<int[]> ids = new ArrayList<>();
            for (int i = 0; i < rendered.length(); ) {
                String special;
                if (marker.find(i) && marker.start() == i) {
                    piece.append(hidden.get(Integer.parseInt(marker.group(1))));
                    i = marker.end();
                } else if ((special = special(rendered, i)) != null) {
                    text.append(piece);
                    flush(model, piece, ids);
                    ids.add(model.tokenize(special, ids.isEmpty(), true));
                    text.append(special);
                    i += special.length();
                } else {
                    piece.append(rendered.charAt(i++));
                }
            }
            text.append(piece);
            flush(model, piece, ids);
            return new ChatPrompt(text.toString(), concat(ids));
        }

        /** A piece of text: the first with the leading special tokens, a later one as it reads within a text. */
        private static void flush(ServedModel model, StringBuilder piece, List<int[]> ids) {
            if (piece.isEmpty()) {
                return;
            }
            String p = piece.toString();
            piece.setLength(0);
            if (ids.isEmpty()) {
                ids.add(model.tokenize(p, true, false));
                return;
            }
            // Tokenized alone, a piece would read as the start of a text (a SentencePiece vocabulary puts a space
            // before it): a newline before it takes that place and its tokens are dropped, when they stay apart.
            int[] lead = model.tokenize("\n", false, false);
            int[] both = model.tokenize("\n" + p, false, false);
            boolean apart = both.length >= lead.length && Arrays.equals(lead, 0, lead.length, both, 0, lead.length);
            ids.add(apart ? Arrays.copyOfRange(both, lead.length, both.length) : model.tokenize(p, false, false));
        }

        private static int[] concat(List<int[]> pieces) {
            int[] ids = new int[pieces.stream().mapToInt(p -> p.length).sum()];
            int at = 0;
            for (int[] p : pieces) {
                System.arraycopy(p, 0, ids, at, p.length);
                at += p.length;
            }
            return ids;
        }
    }
}
