package dev.laneway.engine.laya;

import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.RouterException;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The scorer on a real model: stories260K packed as a container. */
class ScorerClassifierTest {
    private static final List<String> STATES = List.of(
            "Write a Python function that reverses a list",
            "Once upon a time there was a little girl who loved to play in the park.",
            "What is the capital of France?");

    private static LanewayModel model;
    private static ScorerClassifier scorer;

    @BeforeAll
    static void open() {
        model = Packed.open(Packed.stories260k("f32"), "java");
        scorer = new ScorerClassifier(dev.laneway.engine.model.ModelAssembly.scoring(model), "stories260K");
    }

    @AfterAll
    static void close() {
        scorer.close();
    }

    @Test
    void eachChoiceHasItsOwnFirstToken() {
        int[] ids = scorer.choiceTokens();
        assertEquals(3, ids.length);
        assertEquals(3, Arrays.stream(ids).distinct().count());
        for (int i = 0; i < ids.length; i++) {
            String piece = model.detokenize(new int[]{ids[i]}).strip();
            String choice = RequestClass.CHOICES.get(i).wireName();
            assertTrue(!piece.isEmpty() && choice.startsWith(piece), "token " + ids[i] + " ('" + piece
                    + "') starts '" + choice + "'");
        }
    }

    @Test
    void thePromptIsTheStateThenTheQuestion() {
        int[] prompt = scorer.prompt(STATES.get(2));
        assertEquals(1, prompt[0], "stories260K's BOS leads");
        String text = model.detokenize(prompt);
        assertTrue(text.contains("What is the capital of France?"), text);
        assertTrue(text.endsWith("Question: What kind of answer does this request need?\nChoices: code, prose, "
                + "short\nAnswer:"), text);
    }

    /**
     * The confidence is 1 − H(p)/ln 3 over the choices' probabilities, renormalised; the probabilities here come
     * from the generation path's own log-probabilities (every token's, one generated token), not from the scorer.
     */
    @Test
    void confidenceIsTheNormalisedEntropyOfTheScorersChoiceProbabilities() {
        int vocab = model.info().vocabSize();
        for (String state : STATES) {
            int[] prompt = scorer.prompt(state);
            Map<Integer, Float> logprobs = new HashMap<>();
            model.generate(new GenerationRequest(prompt, 1, Sampling.GREEDY, vocab, true), token -> {
                for (GeneratedToken.TokenLogprob t : token.top()) {
                    logprobs.put(t.id(), t.logprob());
                }
                return true;
            });
            assertEquals(vocab, logprobs.size());
            int[] ids = scorer.choiceTokens();
            double[] p = new double[3];
            double sum = 0;
            for (int i = 0; i < 3; i++) {
                p[i] = Math.exp(logprobs.get(ids[i]));
                sum += p[i];
            }
            double entropy = 0;
            int best = 0;
            for (int i = 0; i < 3; i++) {
                p[i] /= sum;
                entropy -= p[i] * Math.log(p[i]);
                best = p[i] > p[best] ? i : best;
            }
            Classification c = scorer.classify(state);
            assertArrayEquals(p, scorer.probabilities(state), 1e-5, state);
            assertEquals(1 - entropy / Math.log(3), c.confidence(), 1e-5, state);
            assertEquals(RequestClass.CHOICES.get(best), c.requestClass(), state);
            assertTrue(c.confidence() > 0 && c.confidence() < 1, state + ": " + c);
        }
    }

    @Test
    void aStateTooLongForTheScorersContextKeepsItsEnd() {
        ScoringModel small = new ScoringModel() {
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
                return 100;
            }

            @Override
            public void close() {
            }
        };
        ScorerClassifier narrow = new ScorerClassifier(small, "narrow");
        String state = "The cat sat on the mat. ".repeat(20) + "The end of the request.";
        int[] prompt = narrow.prompt(state);
        assertEquals(99, prompt.length, "one position stays free for the answer");
        assertEquals(1, prompt[0]);
        String text = model.detokenize(prompt);
        assertTrue(text.contains("The cat sat on the mat. The end of the request."), text);
        assertTrue(text.endsWith("Answer:"), text);
        assertTrue(text.length() < state.length(), "the state's start was dropped: " + text);
        assertNotEquals(scorer.prompt(state).length, prompt.length);
        assertEquals(scorer.classify("short").requestClass(), narrow.classify("short").requestClass());
    }

    @Test
    void aFailingScorerFailsTheRequestWithARouterError() {
        ScoringModel failing = new ScoringModel() {
            @Override
            public int[] encode(String text, boolean addSpecial) {
                return model.tokenize(text, addSpecial, false);
            }

            @Override
            public float[] nextTokenLogits(int[] prompt) {
                throw new DeviceFaultException("cpu", "kernel 'matmul' timed out at position 3");
            }

            @Override
            public int contextLength() {
                return 2048;
            }

            @Override
            public void close() {
            }
        };
        RouterException e = assertThrows(RouterException.class,
                () -> new ScorerClassifier(failing, "failing").classify("hello"));
        assertEquals("laya: the scorer failed on this request: kernel 'matmul' timed out at position 3",
                e.getMessage());
    }
}
