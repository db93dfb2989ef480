package dev.laneway.engine.laya;

/** The language model a {@link ScorerClassifier} asks: its tokenizer, its context and its next-token logits. */
public interface ScoringModel extends AutoCloseable {

    /** Token ids of text, special-token text left as text. */
    int[] encode(String text, boolean addSpecial);

    /** The logits after the prompt's last token, one per vocabulary entry. */
    float[] nextTokenLogits(int[] prompt);

    /** The most positions one prompt may use. */
    int contextLength();

    @Override
    void close();

    /** Opens the scorer a checkpoint holds (its directory) as a scoring model. */
    @FunctionalInterface
    interface Opener {
        ScoringModel open(java.nio.file.Path dir) throws java.io.IOException;
    }
}
