package dev.laneway.engine.sample;

import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** OpenAI's logit biases and presence and frequency penalties, as the sampler applies them. */
class SamplerTest {
    private static Sampling greedy(double presence, double frequency, Map<Integer, Float> bias) {
        return new Sampling(0, 0, 1, 0, 1, 64, OptionalLong.empty(), presence, frequency, bias);
    }

    @Test
    void aLogitBiasIsAddedBeforeTheChoice() {
        float[] logits = {5f, 4f, 1f, 0f};
        assertEquals(3, new Sampler(greedy(0, 0, Map.of(3, 100f)), 4).sample(logits.clone(), 4));
        float[] banned = logits.clone();
        assertEquals(1, new Sampler(greedy(0, 0, Map.of(0, -100f)), 4).sample(banned, 4));
        assertArrayEquals(new float[]{-95f, 4f, 1f, 0f}, banned);
    }

    @Test
    void penaltiesSubtractPresenceOnceAndFrequencyPerOccurrenceOfTheOutput() {
        Sampler sampler = new Sampler(greedy(0.75, 0.5, Map.of()), 5);
        sampler.seen(4); // a prompt token: not part of the output, not penalised
        sampler.accepted(0);
        sampler.accepted(1);
        sampler.accepted(1);
        sampler.accepted(1);
        float[] logits = {5f, 6f, 4.5f, 1f, 2f};
        assertEquals(2, sampler.sample(logits, 5));
        assertArrayEquals(new float[]{5f - 0.5f - 0.75f, 6f - 1.5f - 0.75f, 4.5f, 1f, 2f}, logits);
    }

    @Test
    void negativePenaltiesEncourageRepetition() {
        Sampler sampler = new Sampler(greedy(-1, 0, Map.of()), 3);
        sampler.accepted(2);
        assertEquals(2, sampler.sample(new float[]{1f, 1.5f, 0.8f}, 3));
    }

    @Test
    void withoutPenaltiesOrBiasesTheLogitsAreUntouched() {
        float[] logits = {0.5f, 2f, -1f};
        Sampler sampler = new Sampler(Sampling.GREEDY, 3);
        sampler.accepted(1);
        assertEquals(1, sampler.sample(logits, 3));
        assertArrayEquals(new float[]{0.5f, 2f, -1f}, logits);
    }

    @Test
    void aBiasOutsideTheVocabularyIsRefusedByName() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> new Sampler(greedy(0, 0, Map.of(9, 1f)), 4));
        assertEquals("logit_bias", e.param());
        assertThrows(IllegalArgumentException.class, () -> greedy(2.5, 0, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> greedy(0, 0, Map.of(1, 101f)));
    }
}
