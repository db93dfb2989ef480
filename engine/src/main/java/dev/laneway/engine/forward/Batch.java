package dev.laneway.engine.forward;

import dev.laneway.engine.lora.AdapterSet;

/**
 * The rows of one forward call. Rows come in segments, each of consecutive positions of one sequence (a slot of the
 * KV cache): a decoding sequence's next token is a segment of one row, a prompt's chunk a longer one. Matrix products
 * run once over all rows; RoPE, the KV store and attention run per segment against its slot. A segment may ask for
 * the logits of its last rows (a prompt's last token; a decoding token and the drafted tokens after it, to verify
 * them); they come back in the order of their rows. Made once per state and refilled for every call.
 */
public final class Batch {
    final int[] tokens;
    final int[] firstRow;
    final int[] rows;
    final int[] startPos;
    final int[] slot;
    /** Rows whose logits are wanted, ascending. */
    final int[] logitRows;
    /** Per segment: first row, rows, first position, cache offset of its slot (filled when the call runs). */
    final int[] quads;
    /** Per segment: the LoRA adapters its rows apply, null for none. */
    final AdapterSet[] adapters;
    /** Whether any segment applies adapters. */
    boolean adapted;
    int segments;
    int totalRows;
    int logitCount;

    Batch(int maxRows, int maxSegments, int maxLogits) {
        tokens = new int[maxRows];
        firstRow = new int[maxSegments];
        rows = new int[maxSegments];
        startPos = new int[maxSegments];
        slot = new int[maxSegments];
        logitRows = new int[maxLogits];
        quads = new int[4 * maxSegments];
        adapters = new AdapterSet[maxSegments];
    }

    /** Empties the batch. */
    public Batch clear() {
        java.util.Arrays.fill(adapters, 0, segments, null);
        segments = 0;
        totalRows = 0;
        logitCount = 0;
        adapted = false;
        return this;
    }

    /**
     * Adds {@code n} tokens {@code tokens[offset ..]} of the sequence in {@code slot} at positions {@code startPos ..}.
     *
     * @param logits how many of the segment's last tokens want the logits after them (0 to n)
     */
    public Batch add(int slot, int startPos, int[] tokens, int offset, int n, int logits) {
        return add(slot, startPos, tokens, offset, n, logits, null);
    }

    /** As above, the rows applying {@code adapters} (null: none). */
    public Batch add(int slot, int startPos, int[] tokens, int offset, int n, int logits, AdapterSet adapters) {
        if (segments == firstRow.length) {
            throw new IllegalArgumentException("more than " + firstRow.length + " sequences in one batch");
        }
        if (n < 1 || totalRows + n > this.tokens.length) {
            throw new IllegalArgumentException("batch of " + (totalRows + n) + " tokens, expected 1 to "
                    + this.tokens.length);
        }
        if (logits < 0 || logits > n || logitCount + logits > logitRows.length) {
            throw new IllegalArgumentException((logitCount + logits) + " rows of logits in one batch (" + logits
                    + " of a segment of " + n + "), expected at most " + logitRows.length);
        }
        System.arraycopy(tokens, offset, this.tokens, totalRows, n);
        firstRow[segments] = totalRows;
        rows[segments] = n;
        this.startPos[segments] = startPos;
        this.slot[segments] = slot;
        this.adapters[segments] = adapters;
        adapted |= adapters != null;
        for (int r = n - logits; r < n; r++) {
            logitRows[logitCount++] = totalRows + r;
        }
        segments++;
        totalRows += n;
        return this;
    }

    /** The scale segment {@code s}'s rows apply {@code adapter} at; 0 when they do not. */
    float scale(int s, dev.laneway.engine.lora.LoraAdapter adapter) {
        return adapters[s] == null ? 0f : adapters[s].scaleOf(adapter);
    }

    /** Whether a segment before {@code s} applies {@code adapter} (whose rows were then all taken with it). */
    boolean appliedBefore(int s, dev.laneway.engine.lora.LoraAdapter adapter) {
        for (int e = 0; e < s; e++) {
            if (scale(e, adapter) != 0) {
                return true;
            }
        }
        return false;
    }

    /** Rows in the batch. */
    public int rows() {
        return totalRows;
    }

    /** Segments in the batch. */
    public int segments() {
        return segments;
    }

    /** Rows whose logits the call returns. */
    public int logitCount() {
        return logitCount;
    }

    /** The first segment's first position, for diagnostics. */
    public int firstPosition() {
        return segments == 0 ? 0 : startPos[0];
    }

    /** The most rows a batch holds. */
    public int maxRows() {
        return tokens.length;
    }

    /** The most rows of logits a batch asks for. */
    public int maxLogits() {
        return logitRows.length;
    }

    /** The most segments (sequences) a batch holds. */
    public int maxSegments() {
        return firstRow.length;
    }
}
