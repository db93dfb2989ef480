package dev.laneway.engine.grammar;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GrammarTest {
    /** Single characters, a few words, and byte pieces of a two-byte and a three-byte character. */
    private static final List<byte[]> PIECES = new ArrayList<>();
    private static final int EOS;

    static {
        for (char c = ' '; c <= '~'; c++) {
            PIECES.add(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
        }
        for (String w : List.of("ab", "abc", "true", "false", "null", "\":", "{\"", "\n", "é", "日本", "123")) {
            PIECES.add(w.getBytes(StandardCharsets.UTF_8));
        }
        PIECES.add(new byte[] {(byte) 0xE6});               // the lead byte of 日 (U+65E5)
        PIECES.add(new byte[] {(byte) 0x97, (byte) 0xA5});  // its continuation
        PIECES.add(new byte[] {(byte) 0xF0});               // a four-byte lead: only code points from U+10000
        EOS = PIECES.size();
    }

    private static Grammars grammars() {
        return new Grammars(PIECES.size(), PIECES::get, new int[] {EOS}, PIECES.size() + 1);
    }

    private static int token(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < PIECES.size(); i++) {
            if (java.util.Arrays.equals(PIECES.get(i), b)) {
                return i;
            }
        }
        throw new IllegalArgumentException(text);
    }

    /** Whether the tokens, one after the other, are allowed, and the text then is whole (EOS allowed). */
    private static boolean accepts(String gbnf, int... tokens) {
        GrammarCursor c = grammars().start(gbnf);
        for (int t : tokens) {
            if (!c.allows(t)) {
                return false;
            }
            c.accept(t);
        }
        return c.allows(EOS);
    }

    private static boolean accepts(String gbnf, String... pieces) {
        int[] ids = new int[pieces.length];
        for (int i = 0; i < pieces.length; i++) {
            ids[i] = token(pieces[i]);
        }
        return accepts(gbnf, ids);
    }

    @Test
    void literalsClassesAndRepetitions() {
        String g = "root ::= \"ab\" [0-9]+ (\"x\" | \"y\")? # a comment\n";
        assertTrue(accepts(g, "ab", "1", "2"));
        assertTrue(accepts(g, "a", "b", "1", "x"));
        assertFalse(accepts(g, "ab"));
        assertFalse(accepts(g, "ab", "1", "x", "y"));
        assertFalse(accepts(g, "abc"));
        String bounded = "root ::= [a-c]{2,3}";
        assertFalse(accepts(bounded, "a"));
        assertTrue(accepts(bounded, "ab"));
        assertTrue(accepts(bounded, "abc"));
        assertFalse(accepts(bounded, "abc", "a"));
        assertTrue(accepts("root ::= [^\"]* \"\\\"\"", "a", "\""));
    }

    @Test
    void rulesMaySpanLinesAndReferEachOther() {
        String g = """
                root ::= "{" ws
                  ( pair ( "," ws pair )* )?
                  "}"
                pair ::= "\\"" [a-z]+ "\\":" ws value
                value ::= "true" | "false" | "null" | [0-9]+ | root
                ws ::= [ \\t\\n]*
                """;
        assertTrue(accepts(g, "{", "}"));
        assertTrue(accepts(g, "{\"", "a", "b", "\":", " ", "true", "}"));
        assertTrue(accepts(g, "{\"", "a", "\":", "{", "}", ",", "\"", "b", "\":", "123", "}"));
        assertFalse(accepts(g, "{\"", "a", "\":", "t", "r", "u", "}"));
    }

    @Test
    void multiByteCharactersAcrossTokens() {
        String g = "root ::= [\\u65e5] [^a]*";
        assertTrue(accepts(g, "日本"));
        assertTrue(accepts(g, new int[] {PIECES.size() - 3, PIECES.size() - 2}));
        GrammarCursor c = grammars().start(g);
        assertTrue(c.allows(PIECES.size() - 3), "the lead byte of the one allowed character");
        assertFalse(c.allows(token("é")));
        c.accept(PIECES.size() - 3);
        assertFalse(c.allows(EOS), "a character half written is no end");
        assertFalse(accepts("root ::= [\\u00e0-\\u00e5]", new int[] {PIECES.size() - 3}));
        assertTrue(accepts("root ::= \"é\"", "é"));
        assertFalse(grammars().start("root ::= \"{\"").allows(PIECES.size() - 3),
                "a lead byte of a three-byte character can never become {");
        assertFalse(grammars().start("root ::= [a-z{]").allows(PIECES.size() - 1), "no overlong { from F0");
        assertTrue(grammars().start("root ::= [\\U0001F600]").allows(PIECES.size() - 1));
    }

    @Test
    void theMaskAgreesWithEachTokensCheck() {
        String g = "root ::= (\"a\" [b-d]* | [0-9]+ \".\" [0-9]) \"\\n\"?";
        GrammarCursor c = grammars().start(g);
        SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 8; step++) {
            float[] logits = new float[PIECES.size() + 1];
            boolean any = c.restrict(logits, logits.length);
            List<Integer> allowed = new ArrayList<>();
            for (int t = 0; t < logits.length; t++) {
                assertEquals(c.allows(t), logits[t] == 0, "token " + t + " at step " + step);
                if (c.allows(t) && t != EOS) {
                    allowed.add(t);
                }
            }
            assertEquals(any, !allowed.isEmpty() || c.allows(EOS));
            if (allowed.isEmpty()) {
                break;
            }
            c.accept(allowed.get(random.nextInt(allowed.size())));
        }
    }

    @Test
    void aWholeSentenceWithNothingToFollowIsComplete() {
        GrammarCursor c = grammars().start("root ::= \"ab\"");
        assertFalse(c.complete());
        c.accept(token("ab"));
        assertTrue(c.complete());
        assertTrue(c.allows(EOS));
        GrammarCursor open = grammars().start("root ::= \"a\"+");
        open.accept(token("a"));
        assertFalse(open.complete(), "more a's may follow");
        assertTrue(open.allows(EOS));
    }

    @Test
    void tuplesHoldExactlyTheirItemsInOrder() throws Exception {
        for (String schema : List.of("{\"prefixItems\":[{\"type\":\"integer\"},{\"const\":\"ab\"}]}",
                "{\"type\":\"array\",\"items\":[{\"type\":\"integer\"},{\"const\":\"ab\"}]}")) {
            String g = JsonSchemaGrammar.of(new com.fasterxml.jackson.databind.ObjectMapper().readTree(schema),
                    "response_format");
            assertTrue(accepts(g, "[", "123", ",", "\"", "ab", "\"", "]"), schema);
            assertFalse(accepts(g, "[", "123", "]"), schema);
            assertFalse(accepts(g, "[", "\"", "ab", "\"", ",", "123", "]"), schema);
            assertFalse(accepts(g, "[", "123", ",", "\"", "ab", "\"", ",", "1", "]"), schema);
        }
    }

    @Test
    void badGrammarsAreRefusedByWhatIsWrong() {
        assertRefused("root ::= foo", "rule foo is used but not defined");
        assertRefused("start ::= \"a\"", "no root rule");
        assertRefused("root ::= root \"a\" | \"b\"", "rule root is left-recursive");
        assertRefused("root ::= x\nx ::= \"\"? root", "left-recursive");
        assertRefused("root ::= \"a", "unterminated literal");
        assertRefused("root ::= [a-", "unterminated character class");
        assertRefused("root ::= \"\\q\"", "unknown escape \\q");
        assertRefused("root ::= <think>", "token references");
        assertRefused("root ::= \"a\"{3,2}", "maximum below its minimum");
        assertRefused("root ::= \"a\"{5000}", "repetitions above 2000");
        assertRefused("root ::= \"a\"\nroot ::= \"b\"", "rule root is defined twice");
        assertRefused("root ::= (\"a\"", "expected )");
        assertRefused("root ::= \"a\" ) ", "unexpected character ')'");
        assertRefused("  ", "the grammar is empty");
        assertThrows(GrammarException.class, () -> Grammars.NONE.start("root ::= \"a\""));
    }

    /**
     * What a grammar costs to read is bounded by its text: groups nest at most 256 deep (the parser descends into
     * each, and 4000 overflowed the thread's stack), and repetitions written out come to at most 2^18 elements (a
     * 500-character literal repeated 2000 times took 78 MB).
     */
    @Test
    void groupsNestAndRepetitionsExpandWithinBounds() {
        assertRefused("root ::= " + "(".repeat(300) + "\"a\"" + ")".repeat(300), "groups nest deeper than 256");
        assertTrue(accepts("root ::= " + "(".repeat(256) + "\"a\"" + ")".repeat(256), "a"));
        assertRefused("root ::= " + "\"a\"{2000} ".repeat(140), "the grammar expands to more than 262144 elements");
        String literal = "b".repeat(500);
        GrammarCursor c = grammars().start("root ::= \"" + literal + "\"{2000}");
        assertTrue(c.allows(token("b")));
    }

    /**
     * Rules that may be empty, one after the other, each of several empty alternatives, start in time with their
     * number: the automaton expands each (position, stack) once, on a stack of its own (thirty of them took
     * 2^30 steps).
     */
    @Test
    void emptyRulesInARowExpandOnce() {
        assertTrue(accepts("root ::= " + "x ".repeat(30) + "\"a\"\nx ::= \"\" | \"\"", "a"));
        assertTrue(accepts("root ::= " + "x ".repeat(20000) + "\"a\"\nx ::= \"b\"?", "b", "b", "a"));
    }

    /** A schema of thousands of properties becomes a grammar without recursing once per property. */
    @Test
    void aSchemaOfManyPropertiesIsRead() throws Exception {
        StringBuilder schema = new StringBuilder("{\"type\":\"object\",\"properties\":{");
        for (int i = 0; i < 5000; i++) {
            schema.append(i > 0 ? "," : "").append("\"p").append(i).append("\":{\"type\":\"integer\"}");
        }
        String g = JsonSchemaGrammar.of(new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                schema.append("}}").toString()), "response_format");
        assertTrue(accepts(g, "{", "\"", "p", "4", "9", "9", "9", "\":", "1", "}"));
        assertFalse(accepts(g, "{", "\"", "p", "4", "9", "9", "9", "\":", "1", ",", "\"", "p", "1", "\":", "1", "}"));
    }

    private static void assertRefused(String gbnf, String why) {
        GrammarException e = assertThrows(GrammarException.class, () -> grammars().start(gbnf));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertEquals("grammar", e.param());
    }
}
