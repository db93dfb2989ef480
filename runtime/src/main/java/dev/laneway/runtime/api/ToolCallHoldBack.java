package dev.laneway.runtime.api;

/**
 * Streams an answer that may call tools: text goes on to the client until a call may have begun (the format's marker,
 * or the first characters of it), and from there is held back, to be sent as tool calls once the answer is complete,
 * or as text after all when it turns out to hold none.
 */
final class ToolCallHoldBack {
    private final ToolCallFormat format;
    private final StringBuilder text = new StringBuilder();
    private int sent;
    /** Whether a call has certainly begun: everything from {@link #sent} on is held, with no need to look again. */
    private boolean calling;

    ToolCallHoldBack(ToolCallFormat format) {
        this.format = format;
    }

    /** Takes the next piece of the answer; returns what may go to the client now (perhaps nothing). */
    String accept(String piece) {
        text.append(piece);
        if (calling) {
            return "";
        }
        String all = text.toString();
        int start = Math.max(sent, format.callStart(all));
        calling = format == ToolCallFormat.GENERIC
                || format != ToolCallFormat.LLAMA3 && all.indexOf(format.marker, start) == start;
        String out = text.substring(sent, start);
        sent = start;
        return out;
    }

    /** How much of the answer went to the client: what {@link #accept} returned, in all. */
    int sentLength() {
        return sent;
    }
}
