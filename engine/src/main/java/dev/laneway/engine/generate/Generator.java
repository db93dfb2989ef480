package dev.laneway.engine.generate;

import dev.laneway.engine.forward.Batch;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.TokenSink;

/**
 * Drives one {@link Sequence} alone through a model: the prompt in batches of up to {@code maxBatch} tokens from the
 * first position its KV cache slot does not hold, then one token at a time.
 */
public final class Generator {
    private final Dims dims;
    private final int maxBatch;
    private final int[] endOfText;
    private final Grammars grammars;

    /**
     * @param dims      the model's sizes
     * @param maxBatch  the most prompt tokens one forward call takes
     * @param endOfText token ids that end the text (EOS, end-of-turn)
     */
    public Generator(Dims dims, int maxBatch, int[] endOfText) {
        this(dims, maxBatch, endOfText, Grammars.NONE);
    }

    /** As above, with the grammars that may constrain its generations. */
    public Generator(Dims dims, int maxBatch, int[] endOfText, Grammars grammars) {
        this.dims = dims;
        this.maxBatch = maxBatch;
        this.endOfText = endOfText.clone();
        this.grammars = grammars;
    }

    /**
     * Runs a generation in KV cache slot {@code slot}, which holds {@code cached}: the prompt's common prefix with
     * them is reused, and {@code cached} is kept up to date with every position computed.
     *
     * @throws InvalidRequestException when the prompt does not fit the context or holds a token outside the vocabulary
     */
    public GenerationResult generate(BatchRunner runner, GenerationRequest request, TokenSink sink, int slot,
                                     CachedTokens cached) {
        Sequence s = Sequence.generating(request, sink, slot, cached, dims, endOfText, grammars);
        drive(runner, s);
        return s.result();
    }

    /**
     * Runs a prompt and returns a copy of the logits after its last token: the next-token distribution before any
     * sampling step (the router's scorer reads it).
     *
     * @throws InvalidRequestException when the prompt does not fit the context or holds a token outside the vocabulary
     */
    public float[] nextTokenLogits(BatchRunner runner, int[] prompt, int slot, CachedTokens cached) {
        Sequence s = Sequence.logitsOnly(prompt, slot, cached, dims);
        drive(runner, s);
        return s.logits();
    }

    private void drive(BatchRunner runner, Sequence s) {
        while (!s.finished()) {
            Batch batch = runner.batch().clear();
            int rows = s.feed(batch, maxBatch);
            float[] logits = runner.run();
            s.fed(rows, logits, 0);
        }
    }

    /** The model's sizes. */
    public Dims dims() {
        return dims;
    }

    /** The most tokens one forward call takes. */
    public int maxBatch() {
        return maxBatch;
    }

    /** The grammars that may constrain its generations. */
    public Grammars grammars() {
        return grammars;
    }

    /** Token ids that end the text. */
    public int[] endOfText() {
        return endOfText.clone();
    }
}
