package dev.laneway.engine.model;

import dev.laneway.engine.container.Container;
import dev.laneway.engine.forward.ForwardState;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.sample.Sampler;
import dev.laneway.engine.testing.Golden;
import dev.laneway.engine.testing.Packed;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * q8 and q4_1 packs stay close to f32: over the golden prompts and a greedy continuation of 32 tokens, fed the same
 * tokens, their logits differ from f32's by at most a stated bound, and their own greedy choice agrees with f32's
 * at most positions.
 */
class QuantizedPackTest {
    private static final int STEPS = 32;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"stories260k, q8, 0.35, 0.95", "stories260k, q4_1, 6.0, 0.85",
            "tinystories, q8, 0.35, 0.95", "tinystories, q4_1, 6.0, 0.8"})
    void logitsStayCloseToF32(String model, String quant, double maxLogitDiff, double minAgreement)
            throws IOException {
        Path f32 = model.equals("stories260k") ? Packed.stories260k("f32") : Packed.tinystories("f32");
        Path q = model.equals("stories260k") ? Packed.stories260k(quant) : Packed.tinystories(quant);
        PlanForward ref = forward(f32);
        PlanForward test = forward(q);
        double worst = 0;
        int agree = 0;
        int total = 0;
        try (LanewayModel tokenizer = Packed.open(f32, "java")) {
            for (Golden.Record r : Golden.stories260kPublic()) {
                int[] prompt = tokenizer.tokenize(r.prompt(), true, true);
                ForwardState refState = ref.newState(prompt.length);
                ForwardState testState = test.newState(prompt.length);
                float[] a = ref.forward(refState, prompt, 0, prompt.length, 0).clone();
                float[] b = test.forward(testState, prompt, 0, prompt.length, 0);
                int vocab = ref.dims().vocab();
                for (int step = 0; step < STEPS; step++) {
                    worst = Math.max(worst, maxAbsDiff(a, b, vocab));
                    int next = Sampler.argmax(a, vocab);
                    agree += next == Sampler.argmax(b, vocab) ? 1 : 0;
                    total++;
                    int pos = prompt.length + step;
                    a = ref.forward(refState, new int[]{next}, 0, 1, pos).clone();
                    b = test.forward(testState, new int[]{next}, 0, 1, pos);
                }
            }
        }
        double agreement = (double) agree / total;
        System.out.printf("%s %s: max |logit - f32 logit| = %.4f, greedy agreement %.3f over %d positions%n",
                model, quant, worst, agreement, total);
        assertTrue(worst <= maxLogitDiff, model + " " + quant + ": max logit difference " + worst);
        assertTrue(agreement >= minAgreement, model + " " + quant + ": greedy agreement " + agreement);
    }

    private static PlanForward forward(Path dir) throws IOException {
        Container c = Container.open(dir);
        return PlanForward.compile(c.plan(), c.dims(256), c.weightSource(), new JavaKernels());
    }

    private static double maxAbsDiff(float[] a, float[] b, int n) {
        double m = 0;
        for (int i = 0; i < n; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

}
