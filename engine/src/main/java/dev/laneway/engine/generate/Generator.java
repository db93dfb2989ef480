package dev.laneway.engine.generate;

import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.sample.Logprobs;
import dev.laneway.engine.sample.Sampler;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.TokenSink;

import java.util.Arrays;
import java.util.List;

/**
 * The generation loop over a forward pass: the prompt in batches, then one token at a time, sampled and handed to the
 * sink until the model ends the text, the budget or the context runs out, or the sink says stop.
 */
public final class Generator {
    private final Dims dims;
    private final int maxBatch;
    private final int[] endOfText;

    /**
     * @param dims      the model's sizes
     * @param maxBatch  the most prompt tokens one forward call takes
     * @param endOfText token ids that end the text (EOS, end-of-turn)
     */
    public Generator(Dims dims, int maxBatch, int[] endOfText) {
        this.dims = dims;
        this.maxBatch = maxBatch;
        this.endOfText = endOfText.clone();
    }

    /** Runs a generation with nothing cached. */
    public GenerationResult generate(TokenForward forward, GenerationRequest request, TokenSink sink) {
        return generate(forward, request, sink, new CachedTokens());
    }

    /**
     * Runs a generation whose stream's KV cache holds {@code cached}: the prompt's common prefix with them is reused,
     * and {@code cached} is kept up to date with every position computed.
     */
    public GenerationResult generate(TokenForward forward, GenerationRequest request, TokenSink sink,
                                     CachedTokens cached) {
        int[] prompt = request.prompt();
        int vocab = dims.vocab();
        int context = dims.contextLength();
        check(prompt, vocab, context);

        Sampler sampler = new Sampler(request.sampling(), vocab);
        for (int t : prompt) {
            sampler.seen(t);
        }
        long start = System.nanoTime();
        int reused = cached.reusableFor(prompt);
        float[] logits = prefill(forward, prompt, reused, cached);
        long promptDone = System.nanoTime();

        Logprobs logprobs = request.wantsLogprobs() ? new Logprobs(vocab) : null;
        float[] raw = request.wantsLogprobs() ? new float[vocab] : null;
        int budget = Math.min(request.maxTokens(), context - prompt.length);
        int[] next = new int[1];
        int pos = prompt.length;
        int generated = 0;
        FinishReason finish = FinishReason.LENGTH;
        while (generated < budget) {
            double lse = 0;
            List<GeneratedToken.TokenLogprob> top = List.of();
            if (logprobs != null) {
                // The sampler may change the logits (repetition penalty); log-probabilities are of the raw ones.
                System.arraycopy(logits, 0, raw, 0, vocab);
                lse = Logprobs.logSumExp(raw, vocab);
                top = request.topLogprobs() > 0 ? logprobs.top(raw, vocab, request.topLogprobs(), lse) : List.of();
            }
            int token = sampler.sample(logits, vocab);
            float logprob = logprobs != null ? (float) (raw[token] - lse) : Float.NaN;
            if (!request.ignoreEos() && isEndOfText(token)) {
                finish = FinishReason.END_OF_TEXT;
                break;
            }
            sampler.seen(token);
            generated++;
            if (!sink.accept(new GeneratedToken(token, logprob, top))) {
                finish = FinishReason.STOPPED;
                break;
            }
            if (generated == budget) {
                break;
            }
            next[0] = token;
            logits = forward.forward(next, 0, 1, pos++);
            cached.append(next, 0, 1);
        }
        long end = System.nanoTime();
        return new GenerationResult(finish, prompt.length, generated, promptDone - start, end - promptDone, reused);
    }

    /**
     * Runs a prompt through the model and returns a copy of the logits after its last token: the next-token
     * distribution before any sampling step (the router's scorer reads it).
     *
     * @throws InvalidRequestException when the prompt does not fit the context or holds a token outside the vocabulary
     */
    public float[] nextTokenLogits(TokenForward forward, int[] prompt, CachedTokens cached) {
        check(prompt, dims.vocab(), dims.contextLength());
        return Arrays.copyOf(prefill(forward, prompt, cached.reusableFor(prompt), cached), dims.vocab());
    }

    /**
     * Runs the prompt from position {@code from} (those before it are in the KV cache) in batches, recording each
     * batch in {@code cached}, and returns the logits after its last token.
     */
    private float[] prefill(TokenForward forward, int[] prompt, int from, CachedTokens cached) {
        cached.truncate(from);
        float[] logits = null;
        for (int pos = from; pos < prompt.length; pos += maxBatch) {
            int n = Math.min(maxBatch, prompt.length - pos);
            logits = forward.forward(prompt, pos, n, pos);
            cached.append(prompt, pos, n);
        }
        return logits;
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
