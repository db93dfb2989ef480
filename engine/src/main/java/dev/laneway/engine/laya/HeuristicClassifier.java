package dev.laneway.engine.laya;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The classifier of a checkpoint without a scorer: deterministic evidence counting (docs/laya.md lists the cues).
 * Each choice gets a score, one point per cue found in the state:
 * <ul>
 *   <li>code: 2 for a fenced block ({@code ```}), 1 for each code word present, 1 when at least 8% of the visible
 *       characters (12 or more) are code punctuation {@code {}[]();=<>};</li>
 *   <li>prose: 1 for each prose word present;</li>
 *   <li>short: 1 for each short-answer cue present, 1 for a state of at most 80 bytes, 1 for a single line ending in
 *       {@code ?}.</li>
 * </ul>
 * Words and phrases match case-insensitively as whole words, each counted once. The scores then act as logits, as a
 * scorer's would: p = softmax(scores), confidence = 1 − H(p)/ln 3 (see {@link Choices}). No evidence at all gives
 * equal scores and confidence 0; two agreeing cues give about 0.24.
 */
public final class HeuristicClassifier implements Classifier {
    static final List<String> CODE_WORDS = List.of("code", "function", "python", "java", "javascript", "typescript",
            "rust", "golang", "sql", "regex", "compile", "compiler", "bug", "debug", "script", "class", "method",
            "variable", "def", "return", "import", "const", "void", "println", "printf", "struct", "lambda", "json",
            "yaml", "api", "stack trace", "exception");
    static final List<String> PROSE_WORDS = List.of("story", "essay", "poem", "letter", "article", "blog",
            "describe", "explain", "summarize", "summary", "paragraph", "narrative", "email", "speech", "chapter",
            "review", "once upon a time", "tell me about", "write about", "lyrics", "novel", "dialogue");
    static final List<String> SHORT_CUES = List.of("what is", "what's", "who is", "who was", "when", "where", "which",
            "how many", "how much", "how old", "yes or no", "true or false", "define", "capital of", "translate",
            "one word", "briefly", "quick question");
    static final int SHORT_STATE_BYTES = 80;
    private static final String CODE_PUNCTUATION = "{}[]();=<>";

    private final List<Pattern> codeWords = patterns(CODE_WORDS);
    private final List<Pattern> proseWords = patterns(PROSE_WORDS);
    private final List<Pattern> shortCues = patterns(SHORT_CUES);

    @Override
    public Classification classify(String state) {
        return Choices.fromScores(scores(state));
    }

    /** The scores of code, prose and short, in {@link RequestClass#CHOICES} order. */
    double[] scores(String state) {
        double code = (state.contains("```") ? 2 : 0) + count(codeWords, state) + (punctuationHeavy(state) ? 1 : 0);
        double prose = count(proseWords, state);
        String trimmed = state.strip();
        double brief = count(shortCues, state)
                + (state.getBytes(StandardCharsets.UTF_8).length <= SHORT_STATE_BYTES ? 1 : 0)
                + (!trimmed.contains("\n") && trimmed.endsWith("?") ? 1 : 0);
        return new double[]{code, prose, brief};
    }

    @Override
    public String describe() {
        return "heuristic";
    }

    private static boolean punctuationHeavy(String state) {
        int visible = 0;
        int punctuation = 0;
        for (int i = 0; i < state.length(); i++) {
            char c = state.charAt(i);
            if (!Character.isWhitespace(c)) {
                visible++;
                if (CODE_PUNCTUATION.indexOf(c) >= 0) {
                    punctuation++;
                }
            }
        }
        return visible >= 12 && punctuation * 100 >= visible * 8;
    }

    private static int count(List<Pattern> cues, String state) {
        int n = 0;
        for (Pattern p : cues) {
            if (p.matcher(state).find()) {
                n++;
            }
        }
        return n;
    }

    private static List<Pattern> patterns(List<String> cues) {
        return cues.stream()
                .map(c -> Pattern.compile("(?<![\\p{L}\\p{N}_])" + Pattern.quote(c) + "(?![\\p{L}\\p{N}_])",
                        Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE))
                .toList();
    }
}
