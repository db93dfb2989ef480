package dev.laneway.spi;

import java.util.Objects;

/**
 * How a generation went.
 *
 * @param finish           why it ended
 * @param promptTokens     prompt tokens processed
 * @param generatedTokens  tokens handed to the sink (the end-of-text token is not counted)
 * @param promptNanos      time spent on the prompt
 * @param generationNanos  time spent generating after the prompt
 */
public record GenerationResult(FinishReason finish, int promptTokens, int generatedTokens, long promptNanos,
                               long generationNanos) {
    public GenerationResult {
        Objects.requireNonNull(finish, "finish");
    }
}
