package dev.laneway.engine.grammar;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The grammars of one model's generations: its vocabulary as a {@link TokenTrie} (built at the first grammar) and the
 * automata of the grammars used lately, kept by the grammar as requests give it, so that requests with the same schema share their
 * masks.
 */
public final class Grammars {
    private static final int KEPT = 32;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** For a model without a vocabulary to constrain: every grammar is refused. */
    public static final Grammars NONE = new Grammars(0, t -> null, new int[0], 0);

    private final int tokenizerVocab;
    private final IntFunction<byte[]> tokenBytes;
    private final int[] endOfText;
    private final int logitsVocab;
    private TokenTrie trie;
    private final Map<OutputGrammar, GrammarAutomaton> automata = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<OutputGrammar, GrammarAutomaton> eldest) {
            return size() > KEPT;
        }
    };

    /**
     * @param tokenizerVocab the tokenizer's number of ids
     * @param tokenBytes     the bytes of each id, null for one no grammar may produce (special tokens, holes)
     * @param endOfText      the ids that end the text; allowed where the grammar's sentence is whole
     * @param logitsVocab    the number of logits per row (at least the tokenizer's ids)
     */
    public Grammars(int tokenizerVocab, IntFunction<byte[]> tokenBytes, int[] endOfText, int logitsVocab) {
        this.tokenizerVocab = tokenizerVocab;
        this.tokenBytes = tokenBytes;
        this.endOfText = endOfText.clone();
        this.logitsVocab = logitsVocab;
    }

    /**
     * Grammars over a tokenizer's ordinary tokens: a special token is never part of constrained text.
     *
     * @param logitsVocab the number of logits per row; ids beyond the tokenizer's are never allowed
     */
    public static Grammars of(TextTokenizer tokenizer, int[] endOfText, int logitsVocab) {
        return new Grammars(Math.min(tokenizer.vocabSize(), logitsVocab), t -> {
            try {
                return tokenizer.isSpecial(t) ? null : tokenizer.tokenBytes(t);
            } catch (IllegalArgumentException hole) {
                return null;
            }
        }, endOfText, logitsVocab);
    }

    /**
     * A cursor at the start of {@code gbnf}.
     *
     * @throws GrammarException when the grammar cannot be read or used
     */
    public GrammarCursor start(String gbnf) {
        return new GrammarCursor(automaton(OutputGrammar.gbnf(gbnf, "grammar")), endOfText);
    }

    /**
     * A cursor at the start of {@code grammar}.
     *
     * @throws InvalidRequestException against the grammar's field when it cannot be read or used
     */
    public GrammarCursor start(OutputGrammar grammar) {
        try {
            return new GrammarCursor(automaton(grammar), endOfText);
        } catch (GrammarException e) {
            throw new InvalidRequestException(grammar.field(), e.getMessage());
        }
    }

    /**
     * Checks that {@code grammar} can constrain this model's output, as {@link #start} would.
     *
     * @throws InvalidRequestException against the grammar's field when it cannot
     */
    public void check(OutputGrammar grammar) {
        start(grammar);
    }

    /** The grammar as GBNF; errors name the field it came from. */
    private static String gbnf(OutputGrammar grammar) {
        try {
            return switch (grammar.kind()) {
                case GBNF -> grammar.schemaRules().isEmpty() ? grammar.text()
                        : JsonSchemaGrammar.withSchemaRules(grammar.text(), grammar.schemaRules());
                case JSON_OBJECT -> JsonSchemaGrammar.anyObject();
                case JSON_SCHEMA -> JsonSchemaGrammar.of(JSON.readTree(grammar.text()), grammar.field());
            };
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new InvalidRequestException(grammar.field(), grammar.field() + " is not JSON: "
                    + e.getOriginalMessage());
        }
    }

    /** The grammar's automaton, kept by the request's grammar: a schema is read and converted once, not per use. */
    private synchronized GrammarAutomaton automaton(OutputGrammar grammar) {
        if (tokenizerVocab == 0) {
            throw new GrammarException("this model has no vocabulary to constrain with a grammar");
        }
        GrammarAutomaton a = automata.get(grammar);
        if (a == null) {
            Grammar g = Grammar.parse(gbnf(grammar));
            if (trie == null) {
                trie = new TokenTrie(tokenizerVocab, tokenBytes);
            }
            a = new GrammarAutomaton(g, trie, endOfText, logitsVocab);
            automata.put(grammar, a);
        }
        return a;
    }
}
