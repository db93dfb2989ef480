package dev.laneway.spi;

import java.util.Map;
import java.util.OptionalLong;

/**
 * How the next token is chosen from the model's distribution. The steps run in llama.cpp's order: logit biases,
 * repetition penalty, presence and frequency penalties, top-k, top-p, min-p, then temperature and a draw (or the most
 * likely token when temperature is 0).
 *
 * @param temperature       0 for greedy; otherwise logits are divided by it
 * @param topK              keep the k most likely tokens; 0 keeps all
 * @param topP              keep the smallest set whose probability reaches p; 1 keeps all
 * @param minP              drop tokens less likely than minP times the most likely one; 0 keeps all
 * @param repetitionPenalty divide positive (multiply negative) logits of recently seen tokens by it; 1 is off
 * @param repeatWindow      how many of the latest tokens count as recently seen
 * @param seed              the seed of the draw; the same seed gives the same output
 * @param presencePenalty   OpenAI's: subtracted once from the logit of every token the output already holds
 * @param frequencyPenalty  OpenAI's: subtracted from a token's logit as many times as the output holds it
 * @param logitBias         added to the logits of the given token ids before anything else (OpenAI's -100 to 100)
 */
public record Sampling(double temperature, int topK, double topP, double minP, double repetitionPenalty,
                       int repeatWindow, OptionalLong seed, double presencePenalty, double frequencyPenalty,
                       Map<Integer, Float> logitBias) {

    /** Always the most likely token. */
    public static final Sampling GREEDY = new Sampling(0, 0, 1, 0, 1, 64, OptionalLong.empty());

    /** Without presence or frequency penalties or logit biases. */
    public Sampling(double temperature, int topK, double topP, double minP, double repetitionPenalty,
                    int repeatWindow, OptionalLong seed) {
        this(temperature, topK, topP, minP, repetitionPenalty, repeatWindow, seed, 0, 0, Map.of());
    }

    public Sampling {
        logitBias = Map.copyOf(logitBias);
        if (!(Math.abs(presencePenalty) <= 2) || !(Math.abs(frequencyPenalty) <= 2)) {
            throw new IllegalArgumentException("presence and frequency penalties must be in [-2, 2]");
        }
        for (Map.Entry<Integer, Float> bias : logitBias.entrySet()) {
            if (bias.getKey() < 0 || !(Math.abs(bias.getValue()) <= 100)) {
                throw new IllegalArgumentException("a logit bias needs a token id of at least 0 and a bias in"
                        + " [-100, 100]: " + bias);
            }
        }
        if (!(temperature >= 0)) {
            throw new IllegalArgumentException("temperature must be at least 0");
        }
        if (topK < 0) {
            throw new IllegalArgumentException("topK must be at least 0");
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new IllegalArgumentException("topP must be in (0, 1]");
        }
        if (!(minP >= 0 && minP <= 1)) {
            throw new IllegalArgumentException("minP must be in [0, 1]");
        }
        if (!(repetitionPenalty > 0)) {
            throw new IllegalArgumentException("repetitionPenalty must be positive");
        }
        if (repeatWindow < 0) {
            throw new IllegalArgumentException("repeatWindow must be at least 0");
        }
    }

    public boolean greedy() {
        return temperature == 0;
    }
}
