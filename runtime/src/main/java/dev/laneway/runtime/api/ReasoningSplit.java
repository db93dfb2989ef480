package dev.laneway.runtime.api;

/**
 * A thinking model's answer split into its reasoning, written between {@code <think>} and {@code </think>}, and the
 * content after it, as llama-server does by default. When the prompt already opened the block (a template whose
 * generation prompt ends with {@code <think>}), the answer begins inside it. Streamed, each piece of the answer is
 * split as it comes: what may be the start of a tag is held back until the next piece says.
 */
final class ReasoningSplit {
    static final String OPEN = "<think>";
    static final String CLOSE = "</think>";

    private final boolean opened;
    private final StringBuilder text = new StringBuilder();
    private int sentReasoning;
    private int sentContent;

    /** The reasoning and the content of an answer, or of what may be sent of them so far. */
    record Parts(String reasoning, String content) {
    }

    /** @param opened whether the prompt ends inside an open {@code <think>} block */
    ReasoningSplit(boolean opened) {
        this.opened = opened;
    }

    /** Whether a chat template writes reasoning in think tags. */
    static boolean writtenBy(String templateSource) {
        return templateSource.contains(OPEN) && templateSource.contains(CLOSE);
    }

    /** Whether a rendered prompt leaves the model inside an open think block. */
    static boolean opensIn(String prompt) {
        String end = prompt.stripTrailing();
        return end.endsWith(OPEN);
    }

    /** A whole answer split. */
    static Parts split(String answer, boolean opened) {
        return parts(answer, opened, true);
    }

    /** Takes the next piece of a streamed answer; returns the reasoning and the content that may go out now. */
    Parts accept(String piece) {
        text.append(piece);
        return next(parts(text.toString(), opened, false));
    }

    /** Whatever is left to send once the answer is complete. */
    Parts finish() {
        return next(parts(text.toString(), opened, true));
    }

    private Parts next(Parts now) {
        String reasoning = now.reasoning().length() > sentReasoning ? now.reasoning().substring(sentReasoning) : "";
        String content = now.content().length() > sentContent ? now.content().substring(sentContent) : "";
        sentReasoning = Math.max(sentReasoning, now.reasoning().length());
        sentContent = Math.max(sentContent, now.content().length());
        return new Parts(reasoning, content);
    }

    /** The parts of {@code text}; unless {@code complete}, without a tail that may be the start of a tag. */
    private static Parts parts(String text, boolean opened, boolean complete) {
        String body;
        if (opened) {
            body = text;
        } else {
            String lead = text.stripLeading();
            if (lead.startsWith(OPEN)) {
                body = lead.substring(OPEN.length());
            } else if (!complete && OPEN.startsWith(lead)) {
                return new Parts("", "");
            } else {
                return new Parts("", text);
            }
        }
        int close = body.indexOf(CLOSE);
        if (close < 0) {
            int keep = complete ? body.length() : body.length() - partialTail(body, CLOSE);
            return new Parts(body.substring(0, keep).stripLeading(), "");
        }
        return new Parts(body.substring(0, close).stripLeading(), body.substring(close + CLOSE.length()).stripLeading());
    }

    /** How many of the last characters of {@code s} are the first ones of {@code tag}. */
    private static int partialTail(String s, String tag) {
        for (int k = Math.min(tag.length() - 1, s.length()); k > 0; k--) {
            if (s.endsWith(tag.substring(0, k))) {
                return k;
            }
        }
        return 0;
    }
}
