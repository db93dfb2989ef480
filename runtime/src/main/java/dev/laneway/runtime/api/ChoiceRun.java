package dev.laneway.runtime.api;

import dev.laneway.runtime.text.IncrementalText;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * One choice as the model generates it: turns tokens into complete UTF-8 text, watches for stop strings, and hands
 * the listener only text that is final, holding back an end that might still become a stop string. Returning
 * {@code false} from {@link #accept} stops the model at the next step.
 */
final class ChoiceRun implements TokenSink {

    /**
     * Receives text as it becomes final, with the tokens that produced it (those that start before its end) and
     * their log-probabilities when asked for.
     */
    @FunctionalInterface
    interface Listener {
        void text(String text, int[] tokens, List<TokenLogprob> logprobs);

        /** The prompt has been computed further (the choice's clock says how far). */
        default void progress() {
        }
    }

    private final ServedModel model;
    private final StopStrings stops;
    private final boolean logprobs;
    private final Listener listener;
    private final BooleanSupplier cancelled;
    private final ChoiceClock clock;
    private final IncrementalText decoder;
    private final StringBuilder text = new StringBuilder();
    private final List<TokenLogprob> pending = new ArrayList<>();
    private final List<TokenLogprob> reported = new ArrayList<>();
    private final Map<Integer, String> pieces = new HashMap<>();
    /** Every token handed over, and where each one's text starts; those from {@code released} on are pending. */
    private int[] tokens = new int[16];
    private int[] offsets = new int[16];
    private int tokenCount;
    private int released;
    private int sent;
    private String stopString;

    ChoiceRun(ServedModel model, StopStrings stops, boolean logprobs, Listener listener, BooleanSupplier cancelled,
              ChoiceClock clock) {
        this.model = model;
        this.clock = clock;
        this.stops = stops;
        this.logprobs = logprobs;
        this.listener = listener;
        this.cancelled = cancelled;
        this.decoder = new IncrementalText(model);
    }

    @Override
    public boolean cancelled() {
        return cancelled.getAsBoolean();
    }

    @Override
    public void promptProgress(int total, int cached, int processed, long nanos) {
        clock.prompt(total, cached, processed, nanos);
        listener.progress();
    }

    @Override
    public boolean accept(GeneratedToken token) {
        if (cancelled.getAsBoolean()) {
            return false;
        }
        clock.generated();
        if (logprobs) {
            pending.add(logprob(token, text.length()));
        }
        if (tokenCount == tokens.length) {
            tokens = Arrays.copyOf(tokens, 2 * tokenCount);
            offsets = Arrays.copyOf(offsets, 2 * tokenCount);
        }
        tokens[tokenCount] = token.id();
        offsets[tokenCount++] = text.length();
        text.append(decoder.add(token.id()));
        if (stops.isEmpty()) {
            release(text.length(), false);
            return true;
        }
        // Text before `sent` cannot hold the start of a stop string: it was released only once it could not.
        int stopAt = stops.find(text, sent);
        if (stopAt >= 0) {
            stopString = stops.at(text, stopAt);
            text.setLength(stopAt);
            release(stopAt, false);
            pending.clear();
            return false;
        }
        release(text.length() - stops.heldBack(text), false);
        return true;
    }

    /** Ends the choice: releases what was held back (unless a stop string ended it) and says how it ended. */
    ChoiceOutcome finish(int index, GenerationResult result) {
        if (stopString == null) {
            text.append(decoder.flush());
            release(text.length(), true);
        }
        ChoiceOutcome.Ending ending = new ChoiceOutcome.Ending(stopString != null ? "word"
                : result.finish() == FinishReason.LENGTH ? "limit" : "eos", stopString == null ? "" : stopString,
                Arrays.copyOf(tokens, tokenCount));
        String reason = ending.type().equals("limit") ? "length" : "stop";
        return new ChoiceOutcome(index, text.toString(), reason, reported, result, ending);
    }

    /** Hands the listener the text up to {@code end} and the tokens that start before it (all of them at the end). */
    private void release(int end, boolean last) {
        List<TokenLogprob> ready = new ArrayList<>();
        for (Iterator<TokenLogprob> it = pending.iterator(); it.hasNext(); ) {
            TokenLogprob entry = it.next();
            if (last || entry.textOffset() < end) {
                ready.add(entry);
                it.remove();
            }
        }
        int from = released;
        while (released < tokenCount && (last || offsets[released] < end)) {
            released++;
        }
        String fresh = end > sent ? text.substring(sent, end) : "";
        sent = Math.max(sent, end);
        if (!fresh.isEmpty() || !ready.isEmpty() || released > from) {
            reported.addAll(ready);
            listener.text(fresh, Arrays.copyOfRange(tokens, from, released), ready);
        }
    }

    private TokenLogprob logprob(GeneratedToken token, int offset) {
        List<TokenLogprob.Candidate> top = new ArrayList<>(token.top().size());
        for (GeneratedToken.TokenLogprob candidate : token.top()) {
            top.add(new TokenLogprob.Candidate(candidate.id(), piece(candidate.id()), candidate.logprob()));
        }
        return new TokenLogprob(token.id(), piece(token.id()), token.logprob(), top, offset);
    }

    /** A token's own text, as the model detokenizes it alone. */
    private String piece(int id) {
        return pieces.computeIfAbsent(id, i -> model.detokenize(new int[]{i}));
    }
}
