package dev.laneway.runtime.api;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A thinking model's answer split into reasoning and content, whole and piece by piece. */
class ReasoningSplitTest {
    private static ReasoningSplit.Parts parts(String reasoning, String content) {
        return new ReasoningSplit.Parts(reasoning, content);
    }

    @Test
    void wholeAnswers() {
        assertEquals(parts("plan it\n", "The answer."), ReasoningSplit.split("<think>\nplan it\n</think>\n\nThe answer.",
                false));
        assertEquals(parts("plan it\n", "The answer."), ReasoningSplit.split("plan it\n</think>\n\nThe answer.", true));
        assertEquals(parts("", "Just an answer."), ReasoningSplit.split("Just an answer.", false));
        assertEquals(parts("cut short", ""), ReasoningSplit.split("<think>cut short", false));
        assertEquals(parts("", "a < b"), ReasoningSplit.split("a < b", false));
    }

    @Test
    void streamedPiecesAddUpToTheWholeSplit() {
        String answer = "<think>\nfirst, the sky;\nthen </thin the sea\n</think>\n\nBlue.";
        for (int size : List.of(1, 2, 3, 5, 8, 13)) {
            ReasoningSplit split = new ReasoningSplit(false);
            StringBuilder reasoning = new StringBuilder();
            StringBuilder content = new StringBuilder();
            for (int i = 0; i < answer.length(); i += size) {
                ReasoningSplit.Parts p = split.accept(answer.substring(i, Math.min(answer.length(), i + size)));
                reasoning.append(p.reasoning());
                content.append(p.content());
                assertFalse(reasoning.toString().contains("<think>") || reasoning.toString().contains("</think>"),
                        "a tag never reaches the reasoning: " + reasoning);
            }
            ReasoningSplit.Parts rest = split.finish();
            reasoning.append(rest.reasoning());
            content.append(rest.content());
            assertEquals(ReasoningSplit.split(answer, false), parts(reasoning.toString(), content.toString()),
                    "pieces of " + size);
        }
    }

    @Test
    void templatesAndPromptsSayWhetherTheModelThinks() {
        assertTrue(ReasoningSplit.writtenBy("{{ '<think>\\n' + reasoning + '\\n</think>' }}"));
        assertFalse(ReasoningSplit.writtenBy("{{ message.content }}"));
        assertTrue(ReasoningSplit.opensIn("<|im_start|>assistant\n<think>\n"));
        assertFalse(ReasoningSplit.opensIn("<|im_start|>assistant\n"));
    }
}
