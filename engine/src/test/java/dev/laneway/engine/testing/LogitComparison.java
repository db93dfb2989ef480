package dev.laneway.engine.testing;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.model.LanewayModel;

import java.io.IOException;

/** How far two containers of the same model are apart: the largest logit difference after each golden prompt. */
public final class LogitComparison {
    private LogitComparison() {
    }

    /** Max |logit a − logit b| over the vocabulary after each public golden prompt, tokenized by {@code a}'s tokenizer. */
    public static double maxDifference(Container a, Container b) throws IOException {
        PlanForward x = forward(a);
        PlanForward y = forward(b);
        double worst = 0;
        try (LanewayModel tokenizer = Packed.open(a.dir(), "java")) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = tokenizer.tokenize(r.prompt(), true, true);
                float[] p = x.forward(x.newState(prompt.length), prompt, 0, prompt.length, 0);
                float[] q = y.forward(y.newState(prompt.length), prompt, 0, prompt.length, 0);
                for (int i = 0; i < a.config().vocabSize(); i++) {
                    worst = Math.max(worst, Math.abs(p[i] - q[i]));
                }
            }
        }
        return worst;
    }

    private static PlanForward forward(Container c) throws IOException {
        return PlanForward.compile(c.plan(), c.dims(256), c.weightSource(), new JavaKernels());
    }
}
