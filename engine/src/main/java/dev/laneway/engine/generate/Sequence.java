package dev.laneway.engine.generate;

import dev.laneway.engine.forward.Batch;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.FinalNorm;
import dev.laneway.engine.grammar.GrammarCursor;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.engine.sample.Logprobs;
import dev.laneway.engine.sample.Sampler;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Pooling;
import dev.laneway.spi.TokenSink;

import java.util.Arrays;
import java.util.List;

/**
 * One generation as a forward loop sees it: the prompt fed in chunks from the first position its KV cache slot does
 * not already hold, then one token at a time, each sampled with the generation's own sampler and handed to its sink
 * until the model ends the text, the budget or the context runs out, or the sink says stop. Whoever drives it puts
 * {@link #feed} into a batch, runs the forward, and hands the logits back with {@link #fed}. A generating sequence
 * may first {@linkplain #draft draft} the tokens that follow where its text repeats itself: they are fed after its
 * next token and verified by sampling each row's logits as usual, the text taking them as long as they are what the
 * sampler draws, so that a generation with drafts is the one it is without them. A grammar, when the
 * request has one, limits each token to those that keep the text a prefix of its language, and ends the text when
 * nothing more may follow. A sequence made for
 * {@linkplain #logitsOnly logits only} stops after the prompt and keeps the logits after its last token; one made
 * for an {@linkplain #embedding embedding} computes its whole prompt afresh and pools its rows' hidden states.
 */
public final class Sequence {
    private final GenerationRequest request;
    /** The LoRA adapters its rows apply; null for none. */
    private final dev.laneway.engine.lora.AdapterSet adapters;
    private final TokenSink sink;
    private final int[] prompt;
    private final int slot;
    private final CachedTokens cached;
    private final int vocab;
    private final int[] endOfText;
    private final boolean logitsOnly;
    /** For an embedding: how the rows are pooled, the final norm, the pooled sum so far; else null. */
    private final Pooling pooling;
    private final FinalNorm norm;
    private final float[] pooled;
    private final float[] normed;
    private final Sampler sampler;
    private final GrammarCursor grammar;
    private final Logprobs logprobs;
    private final float[] row;
    private final float[] raw;
    private int reused;
    private final int budget;
    private final int context;
    /** The last sampled token (fed next), then the drafted tokens after it. */
    private int[] next = new int[1];
    private int drafts;
    /** The prompt and the generated tokens, that drafts are looked up in. */
    private int[] text;
    private int textLength;
    private int drafted;
    private int draftsAccepted;
    /**
     * The most tokens the next draft may hold: halved after a draft refused from its first token, doubled after one
     * taken whole, so that a text that does not repeat itself costs about a row per step, and one that does drafts
     * far.
     */
    private int draftCap = MAX_DRAFT_CAP;
    private static final int MAX_DRAFT_CAP = 1 << 10;
    private int fedPrompt;
    private int pos;
    private int generated;
    private FinishReason finish;
    private final long start = System.nanoTime();
    private long promptDone;
    private long end;

    private Sequence(GenerationRequest request, dev.laneway.engine.lora.AdapterSet adapters, TokenSink sink, int slot,
                     CachedTokens cached, Dims dims, int[] endOfText, Grammars grammars, boolean logitsOnly,
                     Pooling pooling, FinalNorm norm) {
        this.prompt = request.prompt();
        check(prompt, dims.vocab(), dims.contextLength());
        this.request = request;
        this.adapters = adapters;
        this.sink = sink;
        this.slot = slot;
        this.cached = cached;
        this.vocab = dims.vocab();
        this.endOfText = endOfText;
        this.logitsOnly = logitsOnly || pooling != null;
        this.pooling = pooling;
        this.norm = norm;
        this.pooled = pooling != null ? new float[dims.hidden()] : null;
        this.normed = pooling != null ? new float[dims.hidden()] : null;
        this.sampler = new Sampler(request.sampling(), vocab);
        this.grammar = request.grammar().map(g -> grammars.start(g)).orElse(null);
        for (int t : prompt) {
            sampler.seen(t);
        }
        this.text = prompt;
        this.textLength = prompt.length;
        this.logprobs = request.wantsLogprobs() ? new Logprobs(vocab) : null;
        this.row = new float[vocab];
        this.raw = request.wantsLogprobs() ? new float[vocab] : null;
        this.context = dims.contextLength();
        this.budget = request.shiftKeep() == GenerationRequest.NO_SHIFT
                ? Math.min(request.maxTokens(), context - prompt.length) : request.maxTokens();
        this.reused = cached.reusableFor(request.cacheSalt(), prompt);
        cached.keep(reused, request.cacheSalt());
        this.fedPrompt = reused;
        this.pos = reused;
    }

    /**
     * A generation in KV cache slot {@code slot}, whose contents {@code cached} records.
     *
     * @throws InvalidRequestException when the prompt does not fit the context or holds a token outside the vocabulary
     */
    public static Sequence generating(GenerationRequest request, TokenSink sink, int slot, CachedTokens cached,
                                      Dims dims, int[] endOfText) {
        return generating(request, sink, slot, cached, dims, endOfText, Grammars.NONE);
    }

    /**
     * As above, its grammar (if the request has one) compiled by {@code grammars}.
     *
     * @throws InvalidRequestException also when the request's grammar cannot be used
     */
    public static Sequence generating(GenerationRequest request, TokenSink sink, int slot, CachedTokens cached,
                                      Dims dims, int[] endOfText, Grammars grammars) {
        return generating(request, null, sink, slot, cached, dims, endOfText, grammars);
    }

    /**
     * As above, its rows applying {@code adapters} (null: none), the adapters its request names; the request's cache
     * salt must keep their cache apart ({@link dev.laneway.engine.lora.AdapterSet#cacheSalt}).
     */
    public static Sequence generating(GenerationRequest request, dev.laneway.engine.lora.AdapterSet adapters,
                                      TokenSink sink, int slot, CachedTokens cached, Dims dims, int[] endOfText,
                                      Grammars grammars) {
        return new Sequence(request, adapters, sink, slot, cached, dims, endOfText, grammars, false, null, null);
    }

    /** A prompt run for the logits after its last token (see {@link #logits()}). */
    public static Sequence logitsOnly(int[] prompt, int slot, CachedTokens cached, Dims dims) {
        return new Sequence(new GenerationRequest(prompt, 0, dev.laneway.spi.Sampling.GREEDY), null, t -> false, slot,
                cached, dims, new int[0], Grammars.NONE, true, null, null);
    }

    /**
     * A prompt run for its embedding (see {@link #embedding()}): every row computed afresh, each row's hidden state
     * normalised by {@code norm} and pooled as {@code pooling} says. {@code consumer} says when its client has gone.
     */
    public static Sequence embedding(int[] prompt, TokenSink consumer, int slot, CachedTokens cached, Dims dims,
                                     Pooling pooling, FinalNorm norm) {
        return new Sequence(new GenerationRequest(prompt, 0, dev.laneway.spi.Sampling.GREEDY), null, consumer, slot,
                cached, dims, new int[0], Grammars.NONE, true, pooling, norm);
    }

    /** Whether this sequence pools hidden states ({@link #pool} before each {@link #fed}). */
    public boolean pools() {
        return pooling != null;
    }

    /** Where its rows' hidden states are left by each step, for an embedding sequence. */
    public FinalNorm finalNorm() {
        return norm;
    }

    /**
     * Takes the hidden states of the rows {@link #feed} added, rows {@code firstRow ..} of {@code hidden}: before
     * {@link #fed}, which moves on.
     */
    public void pool(float[] hidden, int firstRow, int rows) {
        for (int r = 0; r < rows; r++) {
            int position = fedPrompt + r;
            boolean wanted = switch (pooling) {
                case MEAN -> true;
                case CLS -> position == 0;
                case LAST, RANK -> position == prompt.length - 1;  // a Qwen3 reranker's head reads the last
            };
            if (wanted) {
                norm.apply(hidden, firstRow + r, normed);
                for (int i = 0; i < pooled.length; i++) {
                    pooled[i] += normed[i];
                }
            }
        }
    }

    /** The pooled hidden state of an embedding sequence that has finished: not normalised. */
    public float[] embedding() {
        float[] out = pooled.clone();
        if (pooling == Pooling.MEAN) {
            for (int i = 0; i < out.length; i++) {
                out[i] /= prompt.length;
            }
        }
        return out;
    }

    /** Whether the sequence has ended. */
    public boolean finished() {
        return finish != null;
    }

    /** Whether prompt tokens remain to be fed. */
    public boolean prefilling() {
        return fedPrompt < prompt.length;
    }

    /** Prompt tokens still to be fed. */
    public int promptLeft() {
        return prompt.length - fedPrompt;
    }

    public int slot() {
        return slot;
    }

    /** Positions of its slot this sequence has filled (the prompt so far, then each token fed back). */
    public int position() {
        return pos;
    }

    /**
     * Whether the context is full and the generation goes on: its KV cache must drop positions ({@link #shift})
     * before the next {@link #feed}.
     */
    public boolean contextFull() {
        return finish == null && !prefilling() && pos >= context;
    }

    /**
     * The positions to keep and to drop when the context is full, as llama-server shifts it: the request's first
     * positions stay, and half of those after them go.
     *
     * @return {keep, discard}
     */
    public int[] shift() {
        int keep = Math.min(request.shiftKeep(), pos - 2);
        return new int[] {keep, (pos - keep) / 2};
    }

    /** The KV cache has dropped {@code discard} positions after {@code keep}: the positions after move down. */
    public void shifted(int keep, int discard) {
        pos -= discard;
        cached.shifted(keep);
    }

    /** How many leading tokens of this prompt {@code other} (another slot's contents) could serve. */
    public int reusableFrom(CachedTokens other) {
        return other.reusableFor(request.cacheSalt(), prompt);
    }

    /**
     * The leading tokens this prompt shares with another sequence's, less this prompt's last (it always runs); none
     * under another cache salt.
     */
    public int commonPrompt(Sequence other) {
        if (!request.cacheSalt().equals(other.request.cacheSalt())) {
            return 0;
        }
        int n = Math.min(prompt.length - 1, other.prompt.length);
        int i = 0;
        while (i < n && prompt[i] == other.prompt[i]) {
            i++;
        }
        return i;
    }

    /**
     * Takes prompt positions up to {@code upTo} as computed: their keys and values have just been copied into this
     * sequence's slot from another that computed the same tokens. They count as cached.
     */
    public void adopt(int upTo) {
        if (!prefilling() || upTo <= fedPrompt || upTo >= prompt.length) {
            throw new IllegalArgumentException("cannot adopt prompt positions up to " + upTo + " after " + fedPrompt
                    + " of " + prompt.length);
        }
        cached.append(prompt, fedPrompt, upTo - fedPrompt);
        reused += upTo - fedPrompt;
        fedPrompt = upTo;
        pos = upTo;
    }

    /**
     * Drafts up to {@code max} tokens to follow the last sampled one, by prompt lookup: the latest earlier place where
     * the text's last three tokens (else two, else one) occur, and the tokens that followed there; within the token
     * budget and the context. Nothing while the prompt is fed.
     *
     * @return the tokens drafted, which {@link #feed} adds after the next token
     */
    public int draft(int max) {
        drafts = 0;
        int limit = Math.min(Math.min(max, draftCap), Math.min(budget - generated - 1, context - pos - 1));
        if (finish != null || prefilling() || limit <= 0) {
            return 0;
        }
        for (int n = Math.min(3, textLength - 1); n >= 1 && drafts == 0; n--) {
            for (int at = textLength - n - 1; at >= 0; at--) {
                if (Arrays.equals(text, at, at + n, text, textLength - n, textLength)) {
                    drafts = Math.min(limit, textLength - (at + n));
                    if (next.length < 1 + drafts) {
                        next = Arrays.copyOf(next, Math.max(2 * next.length, 1 + drafts));
                    }
                    System.arraycopy(text, at + n, next, 1, drafts);
                    break;
                }
            }
        }
        return drafts;
    }

    /** The tokens drafted for the next step ({@link #draft}). */
    public int drafts() {
        return drafts;
    }

    /**
     * Adds this sequence's next rows to {@code batch}: up to {@code maxRows} prompt tokens while prefilling (the
     * logits are asked for with the prompt's last one), else the last sampled token and as many of its drafts as fit
     * (the logits asked for with each).
     *
     * @return the rows added
     */
    public int feed(Batch batch, int maxRows) {
        if (prefilling()) {
            int n = Math.min(maxRows, promptLeft());
            batch.add(slot, fedPrompt, prompt, fedPrompt, n, fedPrompt + n == prompt.length ? 1 : 0, adapters);
            return n;
        }
        drafts = Math.min(drafts, maxRows - 1);
        drafted += drafts;
        batch.add(slot, pos, next, 0, 1 + drafts, 1 + drafts, adapters);
        return 1 + drafts;
    }

    /** The rows of logits a {@link #feed} of {@code rows} rows asked for. */
    public int logitRows(int rows) {
        return prefilling() ? (rows == promptLeft() ? 1 : 0) : rows;
    }

    /**
     * Takes the result of the rows {@link #feed} added: they are in the KV cache now; when they asked for logits,
     * {@code logits[offset ..]} holds them, a row each {@code stride} floats apart, and the next token is sampled and
     * handed to the sink, then, while each drafted token is the one sampled before it, the token after it.
     *
     * @return whether the sequence has ended
     */
    public boolean fed(int rows, float[] logits, int offset, int stride) {
        if (prefilling()) {
            if (fedPrompt == reused) {
                sink.promptProgress(prompt.length, reused, fedPrompt, 0);
            }
            cached.append(prompt, fedPrompt, rows);
            fedPrompt += rows;
            pos += rows;
            long now = System.nanoTime();
            sink.promptProgress(prompt.length, reused, fedPrompt, now - start);
            if (prefilling()) {
                return false;
            }
            promptDone = now;
        } else {
            int before = draftsAccepted;
            boolean ended = decoded(rows, logits, offset, stride);
            int taken = draftsAccepted - before;
            if (rows > 1 && taken == 0) {
                draftCap = Math.max(1, (rows - 1) / 2);
            } else if (rows > 1 && taken == rows - 1) {
                draftCap = Math.min(MAX_DRAFT_CAP, Math.max(draftCap, 2 * taken));
            }
            return ended;
        }
        System.arraycopy(logits, offset, row, 0, vocab);
        if (logitsOnly || generated == budget) {
            return end(FinishReason.LENGTH);
        }
        return sample();
    }

    /** The rows of a decoding step: the last sampled token, then its drafts, each row's logits read while it holds. */
    private boolean decoded(int rows, float[] logits, int offset, int stride) {
        for (int i = 0; i < rows; i++) {
            // row i holds next[i], which the token sampled after row i - 1 has confirmed
            cached.append(next, i, 1);
            pos++;
            System.arraycopy(logits, offset + i * stride, row, 0, vocab);
            if (generated == budget) {
                return end(FinishReason.LENGTH);
            }
            int draft = i + 1 < rows ? next[i + 1] : -1;
            if (sample()) {
                return true;
            }
            if (next[0] != draft) {
                return false;  // the rows after hold drafts the text did not take: their positions are rewritten
            }
            draftsAccepted++;
        }
        return false;
    }

    private boolean sample() {
        double lse = 0;
        List<GeneratedToken.TokenLogprob> top = List.of();
        if (logprobs != null) {
            // The sampler may change the logits (repetition penalty); log-probabilities are of the raw ones.
            System.arraycopy(row, 0, raw, 0, vocab);
            lse = Logprobs.logSumExp(raw, vocab);
            top = request.topLogprobs() > 0 && !request.postSampling()
                    ? logprobs.top(raw, vocab, request.topLogprobs(), lse) : List.of();
        }
        int token = sampler.sample(row, vocab, grammar);
        if (token < 0) {
            throw new InvalidRequestException("grammar", "no token of this model's vocabulary continues the grammar"
                    + " after " + generated + " generated tokens");
        }
        float logprob = logprobs != null ? (float) (raw[token] - lse) : Float.NaN;
        if (logprobs != null && request.postSampling()) {
            logprob = sampler.drawnLogprob(token);
            top = request.topLogprobs() > 0 ? sampler.drawnTop(request.topLogprobs(), token) : List.of();
        }
        if (!request.ignoreEos() && isEndOfText(token)) {
            return end(FinishReason.END_OF_TEXT);
        }
        sampler.accepted(token);
        if (grammar != null) {
            grammar.accept(token);
        }
        if (textLength == text.length) {
            text = Arrays.copyOf(text, Math.max(16, 2 * textLength));
        }
        text[textLength++] = token;
        generated++;
        if (!sink.accept(new GeneratedToken(token, logprob, top))) {
            return end(FinishReason.STOPPED);
        }
        if (grammar != null && grammar.complete()) {
            return end(FinishReason.END_OF_TEXT);
        }
        if (generated == budget) {
            return end(FinishReason.LENGTH);
        }
        next[0] = token;
        return false;
    }

    /** Ends the generation between steps: its client has gone. */
    public void stop() {
        if (finish == null) {
            end(FinishReason.STOPPED);
        }
    }

    private boolean end(FinishReason reason) {
        finish = reason;
        end = System.nanoTime();
        if (promptDone == 0) {
            promptDone = end;
        }
        return true;
    }

    /** How the generation went; call once it has finished. */
    public GenerationResult result() {
        if (finish == null) {
            throw new IllegalStateException("the sequence has not finished");
        }
        return new GenerationResult(finish, prompt.length, generated, promptDone - start, end - promptDone, reused,
                drafted, draftsAccepted);
    }

    /** The logits after the prompt's last token, for a sequence made {@link #logitsOnly}. */
    public float[] logits() {
        return Arrays.copyOf(row, vocab);
    }

    private boolean isEndOfText(int token) {
        for (int e : endOfText) {
            if (e == token) {
                return true;
            }
        }
        return false;
    }

    private static void check(int[] prompt, int vocab, int context) {
        if (prompt.length >= context) {
            throw new InvalidRequestException("prompt", "the prompt has " + prompt.length
                    + " tokens; the context holds " + context + ", with room for at least one generated token");
        }
        for (int t : prompt) {
            if (t < 0 || t >= vocab) {
                throw new InvalidRequestException("prompt", "token id " + t + " is outside the vocabulary of "
                        + vocab + " tokens");
            }
        }
    }
}
