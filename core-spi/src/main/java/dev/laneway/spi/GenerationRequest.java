package dev.laneway.spi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One generation.
 *
 * @param prompt       the prompt token ids, special tokens included
 * @param maxTokens    the most tokens to generate
 * @param sampling     how tokens are chosen
 * @param topLogprobs  {@link #NO_LOGPROBS} to report no log-probabilities; 0 or more to report each token's own
 *                     log-probability and that many most likely alternatives
 * @param ignoreEos    keep generating past the end-of-text token (benchmarks)
 * @param grammar      what the output must be; empty: free text
 * @param cachePrompt  whether the prompt may start from what a KV cache slot already holds of it (llama-server's
 *                     {@code cache_prompt}); false computes every prompt token afresh
 * @param slot         the stream (KV cache slot) to run in, waiting for it if busy (llama-server's {@code id_slot});
 *                     {@link #ANY_SLOT}: the model chooses
 * @param postSampling whether the reported log-probabilities are those of the distribution the token was drawn from
 *                     (after the sampler's filters and temperature; llama-server's {@code post_sampling_probs}) rather
 *                     than the model's
 * @param cacheSalt    what keeps caches apart (vLLM's {@code cache_salt}): the prompt reuses only what a prompt under
 *                     the same salt left in a cache; {@link #NO_SALT} for none
 * @param shiftKeep    {@link #NO_SHIFT}: the generation ends where the context does; 0 or more: when the context is
 *                     full it shifts (llama-server's context shift): the first {@code shiftKeep} positions stay, half
 *                     of those after them are dropped, and the generation goes on (to {@code maxTokens})
 * @param adapters     the LoRA adapters applied, each at its scale; empty: the base model
 */
public record GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos,
                                Optional<OutputGrammar> grammar, boolean cachePrompt, int slot,
                                boolean postSampling, String cacheSalt, int shiftKeep,
                                List<AdapterUse> adapters) {
    /** Report no log-probabilities. */
    public static final int NO_LOGPROBS = -1;
    /** Any stream the model chooses. */
    public static final int ANY_SLOT = -1;
    /** The salt of requests that name none. */
    public static final String NO_SALT = "";
    /** The context does not shift. */
    public static final int NO_SHIFT = -1;

    public GenerationRequest {
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(sampling, "sampling");
        Objects.requireNonNull(grammar, "grammar");
        Objects.requireNonNull(cacheSalt, "cacheSalt");
        adapters = List.copyOf(adapters);
        if (prompt.length == 0) {
            throw new IllegalArgumentException("prompt must hold at least one token");
        }
        if (maxTokens < 0 || topLogprobs < NO_LOGPROBS || slot < ANY_SLOT || shiftKeep < NO_SHIFT) {
            throw new IllegalArgumentException("maxTokens must not be negative, topLogprobs, slot and shiftKeep not"
                    + " below -1");
        }
        prompt = prompt.clone();
    }

    /** The base model alone. */
    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos,
                             Optional<OutputGrammar> grammar, boolean cachePrompt, int slot, boolean postSampling,
                             String cacheSalt, int shiftKeep) {
        this(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, cachePrompt, slot, postSampling, cacheSalt,
                shiftKeep, List.of());
    }

    /** Ending where the context does. */
    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos,
                             Optional<OutputGrammar> grammar, boolean cachePrompt, int slot, boolean postSampling,
                             String cacheSalt) {
        this(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, cachePrompt, slot, postSampling, cacheSalt,
                NO_SHIFT);
    }

    /** In any stream, the model's log-probabilities, with no cache salt. */
    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos,
                             Optional<OutputGrammar> grammar, boolean cachePrompt) {
        this(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, cachePrompt, ANY_SLOT, false, NO_SALT,
                NO_SHIFT);
    }

    /** Reusing the cache. */
    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos,
                             Optional<OutputGrammar> grammar) {
        this(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, true);
    }

    /** Free text. */
    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling, int topLogprobs, boolean ignoreEos) {
        this(prompt, maxTokens, sampling, topLogprobs, ignoreEos, Optional.empty());
    }

    public GenerationRequest(int[] prompt, int maxTokens, Sampling sampling) {
        this(prompt, maxTokens, sampling, NO_LOGPROBS, false);
    }

    @Override
    public int[] prompt() {
        return prompt.clone();
    }

    /** This request with {@code adapters} applied instead of its own. */
    public GenerationRequest withAdapters(List<AdapterUse> adapters) {
        return new GenerationRequest(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, cachePrompt, slot,
                postSampling, cacheSalt, shiftKeep, adapters);
    }

    /** This request under another cache salt. */
    public GenerationRequest withCacheSalt(String salt) {
        return new GenerationRequest(prompt, maxTokens, sampling, topLogprobs, ignoreEos, grammar, cachePrompt, slot,
                postSampling, salt, shiftKeep, adapters);
    }

    /** Whether log-probabilities are asked for. */
    public boolean wantsLogprobs() {
        return topLogprobs >= 0;
    }

    /** The prompt length without copying it. */
    public int promptLength() {
        return prompt.length;
    }
}
