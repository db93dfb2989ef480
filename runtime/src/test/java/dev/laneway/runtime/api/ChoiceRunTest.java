package dev.laneway.runtime.api;

import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Text assembly, stop strings and logprob bookkeeping of one choice, fed byte tokens of a {@link ScriptedModel}. */
class ChoiceRunTest {
    private final ScriptedModel model = new ScriptedModel();
    private final List<String> released = new ArrayList<>();
    private final List<TokenLogprob> reported = new ArrayList<>();

    private ChoiceRun run(List<String> stops, boolean logprobs) {
        return new ChoiceRun(model, new StopStrings(stops), logprobs, (text, tokens, lp) -> {
            released.add(text);
            reported.addAll(lp);
        }, () -> false, new ChoiceClock());
    }

    /** Feeds the UTF-8 bytes of {@code text} as tokens; returns how many were taken before the run said stop. */
    private static int feed(ChoiceRun run, String text) {
        int taken = 0;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            taken++;
            if (!run.accept(new GeneratedToken(b & 0xff, -1f, List.of()))) {
                break;
            }
        }
        return taken;
    }

    private static GenerationResult result(FinishReason finish, int generated) {
        return new GenerationResult(finish, 1, generated, 0, 0);
    }

    @Test
    void releasesEachCharacterOnceItIsComplete() {
        ChoiceRun run = run(List.of(), false);
        feed(run, "a\u00e9\u20ac");
        assertEquals(List.of("a", "\u00e9", "\u20ac"), released);
        ChoiceOutcome outcome = run.finish(0, result(FinishReason.END_OF_TEXT, 6));
        assertEquals("a\u00e9\u20ac", outcome.text());
        assertEquals("stop", outcome.finishReason());
    }

    @Test
    void endsBeforeAStopStringAndSaysStop() {
        ChoiceRun run = run(List.of("lo w"), false);
        int taken = feed(run, "Hello world");
        assertEquals(7, taken, "the run stops at the token that completes the stop string");
        ChoiceOutcome outcome = run.finish(0, result(FinishReason.STOPPED, taken));
        assertEquals("Hel", outcome.text());
        assertEquals("stop", outcome.finishReason());
        assertEquals("Hel", String.join("", released));
    }

    @Test
    void releasesHeldTextWhenTheGenerationEndsWithoutTheStopString() {
        ChoiceRun run = run(List.of("Hello!"), false);
        feed(run, "Hello");
        assertEquals("", String.join("", released), "all of it might still become the stop string");
        ChoiceOutcome outcome = run.finish(0, result(FinishReason.LENGTH, 5));
        assertEquals("Hello", outcome.text());
        assertEquals("length", outcome.finishReason());
        assertEquals("Hello", String.join("", released));
    }

    @Test
    void flushesAnIncompleteCharacterAtTheEnd() {
        ChoiceRun run = run(List.of(), false);
        run.accept(new GeneratedToken('a', -1f, List.of()));
        run.accept(new GeneratedToken(0xe2, -1f, List.of()));
        assertEquals(List.of("a"), released);
        ChoiceOutcome outcome = run.finish(0, result(FinishReason.LENGTH, 2));
        assertEquals("a\uFFFD", outcome.text());
    }

    @Test
    void reportsLogprobsWithTheTextTheyProduced() {
        ChoiceRun run = run(List.of("c"), true);
        feed(run, "abc");
        ChoiceOutcome outcome = run.finish(0, result(FinishReason.STOPPED, 3));
        assertEquals("ab", outcome.text());
        // "c" began the stop string: it is not part of the text, nor of the logprobs.
        assertEquals(List.of("a", "b"), outcome.logprobs().stream().map(TokenLogprob::token).toList());
        assertEquals(List.of(0, 1), outcome.logprobs().stream().map(TokenLogprob::textOffset).toList());
        assertEquals(outcome.logprobs(), reported);
    }

    @Test
    void stopsAtOnceWhenCancelled() {
        ChoiceRun run = new ChoiceRun(model, new StopStrings(List.of()), false, (t, ids, l) -> released.add(t), () -> true,
                new ChoiceClock());
        assertFalse(run.accept(new GeneratedToken('a', -1f, List.of())));
        assertTrue(released.isEmpty());
    }
}
