package dev.laneway.engine.grammar;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.testing.AllocationBudget;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Any text as a request's GBNF grammar: {@link Grammars#check} (what a request's grammar goes through before its
 * generation starts: {@link GbnfParser}, then the automaton's first state over a small vocabulary) either accepts it or
 * refuses it with an {@link InvalidRequestException} against the grammar field (a {@link GrammarException}'s message), and allocates in proportion to the text
 * (repetitions expand, but not without bound). Seeds: the grammars of llama.cpp's examples that Laneway's tests use,
 * the JSON primitives, and the crashes fuzzing found.
 */
class GbnfFuzzTest {
    /** What the largest grammar Laneway expands (GbnfParser.MAX_ELEMENTS) may take, and a generous multiple per byte. */
    private static final AllocationBudget BUDGET = new AllocationBudget(48 << 20, 4096);

    @FuzzTest(maxDuration = "60s")
    void checkAnyText(byte[] bytes) throws Exception {
        String gbnf = new String(bytes, StandardCharsets.UTF_8);
        BUDGET.check(bytes.length, () -> {
            try {
                FuzzVocabulary.grammars().check(OutputGrammar.gbnf(gbnf, "grammar"));
            } catch (InvalidRequestException e) {
                assertEquals("grammar", e.param());
                assertFalse(e.getMessage().isBlank());
            }
        });
    }
}
