package dev.laneway.engine.sample;

/** What the next token may be, when something (a grammar) constrains the output. */
public interface TokenConstraint {

    /** Whether {@code token} may come next. */
    boolean allows(int token);

    /**
     * Sets the logit of every token that may not come next to negative infinity.
     *
     * @return whether any token may come next
     */
    boolean restrict(float[] logits, int vocab);
}
