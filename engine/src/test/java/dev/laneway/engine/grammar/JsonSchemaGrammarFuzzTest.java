package dev.laneway.engine.grammar;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.testing.AllocationBudget;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.OutputGrammar;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Any text as a request's JSON schema ({@code response_format.json_schema.schema}): {@link Grammars#check} (the schema
 * read as JSON, turned into GBNF by {@link JsonSchemaGrammar}, parsed, and the automaton's first state built) either
 * accepts it or refuses it with an {@link InvalidRequestException} against the schema's field, and allocates in
 * proportion to the text. Seeds: schemas of the shapes the docs and tests use, and the crashes fuzzing found.
 */
class JsonSchemaGrammarFuzzTest {
    private static final String FIELD = "response_format.json_schema.schema";
    private static final AllocationBudget BUDGET = new AllocationBudget(48 << 20, 4096);

    @FuzzTest(maxDuration = "60s")
    void checkAnyText(byte[] bytes) throws Exception {
        String schema = new String(bytes, StandardCharsets.UTF_8);
        BUDGET.check(bytes.length, () -> {
            try {
                FuzzVocabulary.grammars().check(OutputGrammar.jsonSchema(schema, FIELD));
            } catch (InvalidRequestException e) {
                assertEquals(FIELD, e.param());
                assertFalse(e.getMessage().isBlank());
            }
        });
    }
}
