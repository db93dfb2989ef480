package dev.laneway.engine.generate;

import dev.laneway.spi.GenerationRequest;

import java.util.Arrays;

/**
 * The tokens whose keys and values a stream's KV cache holds, position by position. A new prompt that begins with
 * them reuses that part of the cache and computes only the rest (a conversation's next turn, a shared system prompt).
 * The contents belong to one cache salt: a prompt under another salt reuses none of them, so that clients that keep
 * their caches apart learn nothing of each other's prompts. Not thread-safe: it belongs to one stream, used by one
 * generation at a time.
 */
public final class CachedTokens {
    private int[] tokens = new int[256];
    private int length;
    private String salt = GenerationRequest.NO_SALT;
    /** Whether the positions after these were shifted: they hold keys and values no fresh prompt would compute. */
    private boolean shifted;

    /** Positions whose keys and values are in the cache. */
    public int length() {
        return length;
    }

    /** The cache salt the contents belong to. */
    public String salt() {
        return salt;
    }

    /** The tokens, position by position. */
    public int[] tokens() {
        return Arrays.copyOf(tokens, length);
    }

    /**
     * How many leading tokens of {@code prompt}, under cache salt {@code salt}, the cache can serve: their common
     * prefix, less the prompt's last token, which always runs so that its logits exist; none under another salt.
     */
    public int reusableFor(String salt, int[] prompt) {
        if (!this.salt.equals(salt)) {
            return 0;
        }
        int n = Math.min(length, prompt.length - 1);
        int i = 0;
        while (i < n && tokens[i] == prompt[i]) {
            i++;
        }
        return i;
    }

    /**
     * Keeps the first {@code n} positions, forgetting those after (they are about to be overwritten), for a prompt
     * under {@code salt}: what follows belongs to that salt.
     */
    public void keep(int n, String salt) {
        length = Math.min(length, Math.max(0, n));
        shifted = false;
        this.salt = salt;
    }

    /** Records that {@code src[offset .. offset + n)} now fill the positions after the current ones. */
    public void append(int[] src, int offset, int n) {
        if (shifted) {
            return;
        }
        if (length + n > tokens.length) {
            tokens = Arrays.copyOf(tokens, Math.max(tokens.length * 2, length + n));
        }
        System.arraycopy(src, offset, tokens, length, n);
        length += n;
    }

    /**
     * The context shifted after position {@code keep}: the positions after it hold keys computed with tokens now
     * dropped, so no later prompt reuses them (its answer is the one it gets alone), until a prompt starts anew.
     */
    public void shifted(int keep) {
        length = Math.min(length, keep);
        shifted = true;
    }

    /** Forgets everything: the cache's contents can no longer be trusted (a device fault mid-step). */
    public void clear() {
        shifted = false;
        length = 0;
        salt = GenerationRequest.NO_SALT;
    }
}
