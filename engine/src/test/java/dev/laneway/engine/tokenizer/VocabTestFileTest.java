package dev.laneway.engine.tokenizer;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class VocabTestFileTest {

    @Test
    void splitsStringsKeepingEmptyOnesAndNewlines() {
        String inp = "Hello\n__ggml_vocab_test__\n\n__ggml_vocab_test__\n\n\n__ggml_vocab_test__\n \n__ggml_vocab_test__\n";
        assertEquals(List.of("Hello", "", "\n", " "), VocabTestFile.splitInputs(inp));
        assertEquals(List.of("a", "tail"), VocabTestFile.splitInputs("a\n__ggml_vocab_test__\ntail"));
        assertEquals(List.of(), VocabTestFile.splitInputs(""));
    }

    @Test
    void readsAndWritesIdLines() {
        List<int[]> out = VocabTestFile.parseOutputs(" 474 287\n\n 13\n");
        assertEquals(3, out.size());
        assertArrayEquals(new int[]{474, 287}, out.get(0));
        assertArrayEquals(new int[0], out.get(1));
        assertEquals(" 474 287", VocabTestFile.formatIds(out.get(0)));
    }
}
