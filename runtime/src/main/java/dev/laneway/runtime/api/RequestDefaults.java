package dev.laneway.runtime.api;

import dev.laneway.runtime.serve.LanewayConfig;

import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What a request that does not say gets: the server's sampling settings ({@code serve --temp --top-k --top-p --min-p
 * --repeat-penalty --seed --n-predict}, as llama-server names them), llama-server's own defaults when unset, and
 * whether a chat template thinks ({@code serve --reasoning}).
 *
 * @param seed           empty: a fresh seed per generation
 * @param nPredict       the most tokens per choice; empty: as many as the context leaves
 * @param enableThinking the chat template's {@code enable_thinking} when the request does not set it: true unless
 *                       {@code --reasoning off}, as llama-server renders a template that can think
 */
record RequestDefaults(double temperature, int topK, double topP, double minP, double repeatPenalty,
                       OptionalLong seed, OptionalInt nPredict, boolean enableThinking) {

    static final RequestDefaults LLAMA_SERVER = new RequestDefaults(0.8, 40, 0.95, 0.05, 1.0, OptionalLong.empty(),
            OptionalInt.empty(), true);

    static RequestDefaults of(LanewayConfig config) {
        LanewayConfig.Sampling s = config.sampling();
        return new RequestDefaults(s.temperature(), s.topK(), s.topP(), s.minP(), s.repeatPenalty(),
                s.seed().filter(seed -> seed != -1).map(OptionalLong::of).orElse(OptionalLong.empty()),
                s.nPredict().filter(n -> n > 0).map(OptionalInt::of).orElse(OptionalInt.empty()),
                !config.reasoning().equals("off"));
    }
}
