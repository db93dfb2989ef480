package dev.laneway.engine.laya;

import dev.laneway.engine.model.LanewayModel;

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

    /** An opened container as a scoring model; closing it closes the model. */
    static ScoringModel of(LanewayModel model) {
        return new ScoringModel() {
            @Override
            public int[] encode(String text, boolean addSpecial) {
                return model.tokenize(text, addSpecial, false);
            }

            @Override
            public float[] nextTokenLogits(int[] prompt) {
                return model.nextTokenLogits(prompt);
            }

            @Override
            public int contextLength() {
                return model.info().contextLength();
            }

            @Override
            public void close() {
                model.close();
            }
        };
    }
}
