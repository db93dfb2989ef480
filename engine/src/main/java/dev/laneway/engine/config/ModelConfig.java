package dev.laneway.engine.config;

import dev.laneway.engine.kernels.RopeFrequencies;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The hyperparameters of a dense decoder-only transformer, named as in a Hugging Face {@code config.json}. Read with
 * {@link ConfigJson}, or derived from GGUF metadata with {@link GgufConfig}.
 *
 * @param modelType             {@code model_type}: llama, qwen2, qwen3, ...
 * @param hiddenSize            {@code hidden_size}, the residual width
 * @param numHiddenLayers       {@code num_hidden_layers}
 * @param numAttentionHeads     {@code num_attention_heads}, query heads
 * @param numKeyValueHeads      {@code num_key_value_heads}, KV heads (grouped-query attention)
 * @param headDim               {@code head_dim}
 * @param intermediateSize      {@code intermediate_size}, the MLP width
 * @param vocabSize             {@code vocab_size}
 * @param maxPositionEmbeddings {@code max_position_embeddings}, the trained context length
 * @param ropeTheta             {@code rope_theta}, the RoPE base
 * @param rmsNormEps            {@code rms_norm_eps}
 * @param tieWordEmbeddings     {@code tie_word_embeddings}: the output projection is the embedding matrix
 * @param attentionBias         {@code attention_bias}: q, k and v projections have biases (always for qwen2)
 * @param hiddenAct             {@code hidden_act}, e.g. silu
 * @param bosTokenId            {@code bos_token_id}, if any
 * @param eosTokenIds           {@code eos_token_id}: one id or several
 * @param ropeScaling           {@code rope_scaling} as it was in the JSON (maps, lists, strings, numbers), empty if none
 * @param slidingWindow         {@code sliding_window}: the positions a sliding-window layer attends to, 0 for none
 *                              (Gemma 3; its sliding layers also rotate without {@code rope_scaling})
 * @param slidingWindowPattern  {@code sliding_window_pattern}: of every this many layers, the last attends fully and
 *                              the others through the window
 * @param ropeLocalTheta        {@code rope_local_base_freq}: the RoPE base of the sliding-window layers
 * @param queryPreAttnScalar    {@code query_pre_attn_scalar}: attention scores scale by its inverse square root; 0
 *                              for the usual {@code head_dim}
 * @param finalLogitSoftcapping {@code final_logit_softcapping}: logits become cap · tanh(logit / cap); 0 for none
 * @param partialRotaryFactor   {@code partial_rotary_factor}: the share of each head that RoPE rotates, its first
 *                              {@link #rotaryDim()} elements (Phi-3/Phi-4-mini: 0.75); 1 for the whole head
 * @param experts               the mixture of experts of every layer's MLP (Qwen3-MoE, Mixtral), {@link Experts#NONE}
 *                              for a dense model
 * @param attnLogitSoftcapping  {@code attn_logit_softcapping}: attention scores become cap · tanh(score / cap)
 *                              (Gemma 2); 0 for none
 */
public record ModelConfig(String modelType, int hiddenSize, int numHiddenLayers, int numAttentionHeads,
                          int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
                          int maxPositionEmbeddings, double ropeTheta, double rmsNormEps, boolean tieWordEmbeddings,
                          boolean attentionBias, String hiddenAct, OptionalInt bosTokenId, List<Integer> eosTokenIds,
                          Map<String, Object> ropeScaling, int slidingWindow, int slidingWindowPattern,
                          double ropeLocalTheta, double queryPreAttnScalar, double finalLogitSoftcapping,
                          double partialRotaryFactor, Experts experts, double attnLogitSoftcapping) {

    /** The widest head Laneway serves; the widest of published models is 256. */
    public static final int MAX_HEAD_DIM = 1 << 14;

    /** A dense config without Gemma's sliding window, query scalar or soft-capping. */
    public ModelConfig(String modelType, int hiddenSize, int numHiddenLayers, int numAttentionHeads,
                       int numKeyValueHeads, int headDim, int intermediateSize, int vocabSize,
                       int maxPositionEmbeddings, double ropeTheta, double rmsNormEps, boolean tieWordEmbeddings,
                       boolean attentionBias, String hiddenAct, OptionalInt bosTokenId, List<Integer> eosTokenIds,
                       Map<String, Object> ropeScaling) {
        this(modelType, hiddenSize, numHiddenLayers, numAttentionHeads, numKeyValueHeads, headDim, intermediateSize,
                vocabSize, maxPositionEmbeddings, ropeTheta, rmsNormEps, tieWordEmbeddings, attentionBias, hiddenAct,
                bosTokenId, eosTokenIds, ropeScaling, 0, 1, ropeTheta, 0, 0, 1, Experts.NONE, 0);
    }

    public ModelConfig {
        Objects.requireNonNull(modelType, "modelType");
        Objects.requireNonNull(hiddenAct, "hiddenAct");
        Objects.requireNonNull(bosTokenId, "bosTokenId");
        positive("hidden_size", hiddenSize);
        positive("num_hidden_layers", numHiddenLayers);
        positive("num_attention_heads", numAttentionHeads);
        positive("num_key_value_heads", numKeyValueHeads);
        positive("head_dim", headDim);
        if (headDim > MAX_HEAD_DIM) {
            // the RoPE table below is sized by it
            throw new IllegalArgumentException("head_dim " + headDim + " is over " + MAX_HEAD_DIM
                    + ", the most Laneway supports");
        }
        positive("intermediate_size", intermediateSize);
        positive("vocab_size", vocabSize);
        positive("max_position_embeddings", maxPositionEmbeddings);
        if (numAttentionHeads % numKeyValueHeads != 0) {
            throw new IllegalArgumentException("num_attention_heads " + numAttentionHeads
                    + " is not a multiple of num_key_value_heads " + numKeyValueHeads);
        }
        if (!(ropeTheta > 0) || !(rmsNormEps > 0)) {
            throw new IllegalArgumentException("rope_theta and rms_norm_eps must be positive, got " + ropeTheta
                    + " and " + rmsNormEps);
        }
        // an infinite value (a GGUF float of +inf, a JSON 1e999) has no config.json form to be written back in
        for (double v : new double[] {ropeTheta, rmsNormEps, ropeLocalTheta, queryPreAttnScalar, finalLogitSoftcapping,
                attnLogitSoftcapping}) {
            if (Double.isInfinite(v)) {
                throw new IllegalArgumentException("rope_theta " + ropeTheta + ", rms_norm_eps " + rmsNormEps
                        + ", rope_local_base_freq " + ropeLocalTheta + ", query_pre_attn_scalar " + queryPreAttnScalar
                        + ", final_logit_softcapping " + finalLogitSoftcapping + " or attn_logit_softcapping "
                        + attnLogitSoftcapping + " is infinite");
            }
        }
        if (slidingWindow < 0 || slidingWindowPattern < 1 || !(ropeLocalTheta > 0) || queryPreAttnScalar < 0
                || finalLogitSoftcapping < 0) {
            throw new IllegalArgumentException("sliding_window " + slidingWindow + ", sliding_window_pattern "
                    + slidingWindowPattern + ", rope_local_base_freq " + ropeLocalTheta + ", query_pre_attn_scalar "
                    + queryPreAttnScalar + " or final_logit_softcapping " + finalLogitSoftcapping + " is out of range");
        }
        // what the architecture's layer has room for; a model_type Laneway does not know has none of it
        Optional<Architecture> arch = Architecture.of(modelType);
        if (slidingWindow > 0 && arch.map(a -> a.window() == Architecture.Window.NONE).orElse(true)) {
            throw unsupported("sliding_window " + slidingWindow, modelType,
                    a -> a.window() != Architecture.Window.NONE);
        }
        if (!(partialRotaryFactor > 0 && partialRotaryFactor <= 1)) {
            throw new IllegalArgumentException("partial_rotary_factor " + partialRotaryFactor
                    + " is out of range (0, 1]");
        }
        if (partialRotaryFactor != 1 && !arch.map(Architecture::partialRotary).orElse(false)) {
            throw unsupported("partial_rotary_factor " + partialRotaryFactor, modelType, Architecture::partialRotary);
        }
        Objects.requireNonNull(experts, "experts");
        if (experts.present() && !arch.map(Architecture::experts).orElse(false)) {
            throw unsupported("num_experts " + experts.count(), modelType, Architecture::experts);
        }
        if (!experts.present() && arch.map(Architecture::experts).orElse(false)) {
            throw new IllegalArgumentException("a " + modelType + " model needs num_experts and num_experts_per_tok");
        }
        int rotary = (int) (headDim * partialRotaryFactor);
        if (rotary < 2 || rotary % 2 != 0) {
            throw new IllegalArgumentException("partial_rotary_factor " + partialRotaryFactor + " of a head of "
                    + headDim + " rotates " + rotary + " elements, not an even number of at least 2");
        }
        if (!(attnLogitSoftcapping >= 0)
                || attnLogitSoftcapping > 0 && !arch.map(Architecture::attentionSoftcap).orElse(false)) {
            throw unsupported("attn_logit_softcapping " + attnLogitSoftcapping, modelType,
                    Architecture::attentionSoftcap);
        }
        boolean gemma = arch.map(Architecture::gemma).orElse(false);
        String activation = arch.map(Architecture::activation).orElse("silu");
        if (!hiddenAct.equals(activation) && !(gemma && hiddenAct.equals("gelu_tanh"))) {
            throw new IllegalArgumentException("hidden_act \"" + hiddenAct + "\" of a " + modelType
                    + " model is not supported (its layers compute " + activation + ")");
        }
        eosTokenIds = List.copyOf(eosTokenIds);
        ropeScaling = Collections.unmodifiableMap(new LinkedHashMap<>(ropeScaling));
        // A scaling that cannot be applied is refused here, when the config is read, not at the first token.
        RopeFrequencies.of(ropeTheta, rotary, ropeScaling, Optional.empty(), maxPositionEmbeddings);
    }

    private static IllegalArgumentException unsupported(String what, String modelType,
                                                        java.util.function.Predicate<Architecture> having) {
        return new IllegalArgumentException(what + " of a " + modelType + " model is not supported (supported for "
                + String.join(", ", Architecture.named(having)) + ")");
    }

    /** The architecture, if Laneway serves this {@code model_type}. */
    public Optional<Architecture> architecture() {
        return Architecture.of(modelType);
    }

    /** The elements of each head that RoPE rotates: the first {@code partial_rotary_factor · head_dim}. */
    public int rotaryDim() {
        return (int) (headDim * partialRotaryFactor);
    }

    /**
     * The RoPE frequencies of this model serving {@code contextLength} positions, with the per-pair factors of a
     * {@code rope_freqs} tensor if it has one (longrope picks its long factors for a context beyond the original).
     *
     * @throws IllegalArgumentException when the factors do not fit the heads
     */
    public RopeFrequencies ropeFrequencies(Optional<float[]> factors, int contextLength) {
        return RopeFrequencies.of(ropeTheta, rotaryDim(), ropeScaling, factors, contextLength);
    }

    /**
     * Whether layer {@code layer} attends through the sliding window: Gemma 3's all but every pattern-th layer,
     * Phi-3's every layer.
     */
    public boolean slidingLayer(int layer) {
        return slidingWindow > 0 && (slidesEveryLayer() || layer % slidingWindowPattern < slidingWindowPattern - 1);
    }

    /** Whether a sliding window, if there is one, covers every layer (Phi-3) rather than Gemma's pattern. */
    public boolean slidesEveryLayer() {
        return architecture().map(a -> a.window() == Architecture.Window.EVERY_LAYER).orElse(false);
    }

    /** The RoPE frequencies of Gemma's sliding-window layers: their own base, no scaling. */
    public RopeFrequencies localRopeFrequencies() {
        return RopeFrequencies.plain(ropeLocalTheta, rotaryDim());
    }

    /** The factor on q·k: 1 / √query_pre_attn_scalar, else 1 / √head_dim. */
    public double attentionScale() {
        return 1.0 / Math.sqrt(queryPreAttnScalar > 0 ? queryPreAttnScalar : headDim);
    }

    private static void positive(String field, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(field + " must be positive, got " + value);
        }
    }

    /** Width of the query projection: heads × head_dim. */
    public int queryDim() {
        return numAttentionHeads * headDim;
    }

    /** Width of the key and value projections: KV heads × head_dim. */
    public int kvDim() {
        return numKeyValueHeads * headDim;
    }

    /** The same config with another vocabulary size. */
    public ModelConfig withVocabSize(int n) {
        return new ModelConfig(modelType, hiddenSize, numHiddenLayers, numAttentionHeads, numKeyValueHeads, headDim,
                intermediateSize, n, maxPositionEmbeddings, ropeTheta, rmsNormEps, tieWordEmbeddings, attentionBias,
                hiddenAct, bosTokenId, eosTokenIds, ropeScaling, slidingWindow, slidingWindowPattern, ropeLocalTheta,
                queryPreAttnScalar, finalLogitSoftcapping, partialRotaryFactor, experts, attnLogitSoftcapping);
    }

    /** The same config with the output head tied to the embedding, or not. */
    public ModelConfig withTiedEmbeddings(boolean tied) {
        return new ModelConfig(modelType, hiddenSize, numHiddenLayers, numAttentionHeads, numKeyValueHeads, headDim,
                intermediateSize, vocabSize, maxPositionEmbeddings, ropeTheta, rmsNormEps, tied, attentionBias,
                hiddenAct, bosTokenId, eosTokenIds, ropeScaling, slidingWindow, slidingWindowPattern, ropeLocalTheta,
                queryPreAttnScalar, finalLogitSoftcapping, partialRotaryFactor, experts, attnLogitSoftcapping);
    }
}
