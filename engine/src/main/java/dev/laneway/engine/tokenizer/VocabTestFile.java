package dev.laneway.engine.tokenizer;

import java.util.ArrayList;
import java.util.List;

/**
 * llama.cpp's tokenizer test vectors: a {@code .inp} file holds strings, each followed by the line
 * {@code __ggml_vocab_test__}; the matching {@code .out} file holds one line of space-separated token ids per string.
 */
public final class VocabTestFile {
    /** What ends each string of a {@code .inp} file. */
    public static final String SEPARATOR = "\n__ggml_vocab_test__\n";

    private VocabTestFile() {
    }

    /** The strings of a {@code .inp} file's text; text after the last separator counts as one more string. */
    public static List<String> splitInputs(String text) {
        List<String> strings = new ArrayList<>();
        int from = 0;
        for (int at = text.indexOf(SEPARATOR); at >= 0; at = text.indexOf(SEPARATOR, from)) {
            strings.add(text.substring(from, at));
            from = at + SEPARATOR.length();
        }
        if (from < text.length()) {
            strings.add(text.substring(from));
        }
        return strings;
    }

    /** The token ids of each line of a {@code .out} file's text. */
    public static List<int[]> parseOutputs(String text) {
        List<int[]> lines = new ArrayList<>();
        for (String line : text.split("\n", -1)) {
            String t = line.strip();
            lines.add(t.isEmpty() ? new int[0]
                    : java.util.Arrays.stream(t.split("\\s+")).mapToInt(Integer::parseInt).toArray());
        }
        if (text.endsWith("\n")) {
            lines.remove(lines.size() - 1);
        }
        return lines;
    }

    /** One {@code .out} line: each id preceded by a space, as llama.cpp writes them. */
    public static String formatIds(int[] ids) {
        StringBuilder out = new StringBuilder(ids.length * 6);
        for (int id : ids) {
            out.append(' ').append(id);
        }
        return out.toString();
    }
}
