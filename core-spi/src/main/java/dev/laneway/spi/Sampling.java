package dev.laneway.spi;

import java.util.OptionalLong;

/**
 * How the next token is chosen from the model's distribution. The steps run in llama.cpp's order: repetition
 * penalty, top-k, top-p, min-p, then temperature and a draw (or the most likely token when temperature is 0).
 *
 * @param temperature       0 for greedy; otherwise logits are divided by it
 * @param topK              keep the k most likely tokens; 0 keeps all
 * @param topP              keep the smallest set whose probability reaches p; 1 keeps all
 * @param minP              drop tokens less likely than minP times the most likely one; 0 keeps all
 * @param repetitionPenalty divide positive (multiply negative) logits of recently seen tokens by it; 1 is off
 * @param repeatWindow      how many of the latest tokens count as recently seen
 * @param seed              the seed of the draw; the same seed gives the same output
 */
public record Sampling(double temperature, int topK, double topP, double minP, double repetitionPenalty,
                       int repeatWindow, OptionalLong seed) {

    /** Always the most likely token. */
    public static final Sampling GREEDY = new Sampling(0, 0, 1, 0, 1, 64, OptionalLong.empty());

    public Sampling {
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
