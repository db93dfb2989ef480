package dev.laneway.engine.laya;

import dev.laneway.spi.RouterException;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The classifier of a checkpoint with a scorer: it asks the scorer one multiple-choice question about the state and
 * reads the answer from the scorer's next-token distribution.
 *
 * <p>The prompt is the state's tokens (with the scorer's leading special tokens), then the tokens of
 * {@code "\n\nQuestion: What kind of answer does this request need?\nChoices: code, prose, short\nAnswer:"} (each
 * part tokenized on its own, so the prompt is the same whatever the state ends with). A choice's token is the first token of {@code " code"}, {@code " prose"} or
 * {@code " short"} as it continues the question: the token at the question's length in the tokens of the question
 * followed by the choice. The three choices' logits, softmaxed, are the choices' probabilities renormalised to sum to
 * one; the class is the likeliest and the confidence {@code 1 − H(p)/ln 3} (see {@link Choices}).
 *
 * <p>When the state does not fit the scorer's context beside the question, its end is kept: the last messages of a
 * conversation and the end of a prompt say most about the answer wanted.
 */
public final class ScorerClassifier implements Classifier {
    /** The question asked. */
    public static final String QUESTION = "What kind of answer does this request need?";
    /** What follows the state in the prompt. */
    static final String QUESTION_TEXT = "\n\nQuestion: " + QUESTION + "\nChoices: code, prose, short\nAnswer:";

    private final ScoringModel model;
    private final String name;
    private final int[] question;
    private final int[] leading;
    private final int[] choiceTokens;

    /**
     * @param name what the scorer is, for the start-up line
     * @throws IllegalArgumentException when the scorer's tokenizer or context cannot pose the question: a choice whose
     *                                  text merges into the question, two choices that start with the same token, or a
     *                                  context too short for the question
     */
    public ScorerClassifier(ScoringModel model, String name) {
        this.model = model;
        this.name = name;
        this.question = model.encode(QUESTION_TEXT, false);
        this.leading = model.encode("", true);
        this.choiceTokens = choiceTokens(model, question);
        if (leading.length + question.length + 1 >= model.contextLength()) {
            throw new IllegalArgumentException("the scorer's context of " + model.contextLength()
                    + " tokens is too short for the question (" + question.length + " tokens)");
        }
    }

    /** The scorer's token for each of {@link RequestClass#CHOICES}, in that order. */
    public int[] choiceTokens() {
        return choiceTokens.clone();
    }

    @Override
    public Classification classify(String state) {
        return Choices.fromProbabilities(probabilities(state));
    }

    /**
     * The choices' probabilities for a state, renormalised over the choices.
     *
     * @throws RouterException when the scorer fails
     */
    public double[] probabilities(String state) {
        float[] logits;
        try {
            logits = model.nextTokenLogits(prompt(state));
        } catch (RuntimeException e) {
            throw new RouterException("laya: the scorer failed on this request: " + e.getMessage(), e);
        }
        double[] scores = new double[choiceTokens.length];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = logits[choiceTokens[i]];
        }
        try {
            return Choices.softmax(scores);
        } catch (IllegalArgumentException e) {
            throw new RouterException("laya: the scorer gave no usable answer: " + e.getMessage(), e);
        }
    }

    /** The prompt for a state: leading special tokens, the state's tokens (their end, if too many), the question. */
    public int[] prompt(String state) {
        int[] withSpecial;
        try {
            withSpecial = model.encode(state, true);
        } catch (RuntimeException e) {
            throw new RouterException("laya: the scorer could not tokenize this request: " + e.getMessage(), e);
        }
        int lead = startsWith(withSpecial, leading) ? leading.length : 0;
        int room = model.contextLength() - 1 - question.length - lead;
        int stateTokens = Math.min(withSpecial.length - lead, room);
        int[] prompt = new int[lead + stateTokens + question.length];
        System.arraycopy(withSpecial, 0, prompt, 0, lead);
        System.arraycopy(withSpecial, withSpecial.length - stateTokens, prompt, lead, stateTokens);
        System.arraycopy(question, 0, prompt, lead + stateTokens, question.length);
        return prompt;
    }

    @Override
    public String describe() {
        return "scorer " + name;
    }

    @Override
    public void close() {
        model.close();
    }

    private static int[] choiceTokens(ScoringModel model, int[] question) {
        List<RequestClass> choices = RequestClass.CHOICES;
        int[] ids = new int[choices.size()];
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < ids.length; i++) {
            String answer = " " + choices.get(i).wireName();
            int[] asked = model.encode(QUESTION_TEXT + answer, false);
            if (asked.length <= question.length || !startsWith(asked, question)) {
                throw new IllegalArgumentException("the scorer's tokenizer merges the answer '" + answer
                        + "' into the question's last token, so its probability cannot be read");
            }
            ids[i] = asked[question.length];
            if (!seen.add(ids[i])) {
                throw new IllegalArgumentException("the scorer's tokenizer starts two answers with the same token "
                        + ids[i] + " ('" + answer.strip() + "' and an earlier one), so they cannot be told apart");
            }
        }
        return ids;
    }

    private static boolean startsWith(int[] ids, int[] prefix) {
        return ids.length >= prefix.length && Arrays.equals(ids, 0, prefix.length, prefix, 0, prefix.length);
    }
}
