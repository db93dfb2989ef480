package dev.laneway.engine.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.LlamaCppModels;
import dev.laneway.engine.testing.Packed;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.OutputGrammar;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Property: whatever JSON Schema (of the supported subset) a request gives, a random-weight model with a real
 * vocabulary (llama.cpp's 32,000-token SentencePiece one and Qwen 2's 151,936-token byte-level BPE) writes text that
 * parses as JSON and conforms to the schema, greedy and sampled. Random weights make the model's own preferences
 * useless, so every token the grammar allows is about as likely as any other: the worst case for the masks.
 */
class ConstrainedOutputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SCHEMAS = 12;

    @TempDir
    static Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"llama-spm", "qwen2"})
    void randomSchemasYieldConformingJson(String vocabulary) throws Exception {
        Path vocab = LlamaCppModels.vocabularies().stream()
                .filter(p -> p.getFileName().toString().equals("ggml-vocab-" + vocabulary + ".gguf")).findFirst()
                .orElseThrow(() -> new AssertionError("llama.cpp's models hold no ggml-vocab-" + vocabulary));
        GgufFile tokenizer = GgufFile.open(vocab);
        int size = ((GgufArray) tokenizer.get("tokenizer.ggml.tokens").orElseThrow()).length();
        Path gguf = dir.resolve(vocabulary + ".gguf");
        RandomModel.write(new ModelShape(64, 1, 4, 2, 128, size, 1024), DType.Q8_0, 11, gguf, tokenizer);
        Path container = dir.resolve(vocabulary);
        new GgufPacker().pack(gguf, container, new PackOptions(Optional.of("q8"), false), PackProgress.NONE);
        try (LanewayModel model = Packed.open(container, "native")) {
            SplittableRandom random = new SplittableRandom(vocabulary.hashCode());
            int[] prompt = model.tokenize("Reply in JSON:", true, false);
            for (int i = 0; i < SCHEMAS; i++) {
                ObjectNode schema = RandomSchemas.object(random, 0);
                Sampling sampling = i % 2 == 0 ? Sampling.GREEDY
                        : new Sampling(1.0, 0, 1, 0, 1, 64, OptionalLong.of(i));
                List<GeneratedToken> tokens = new ArrayList<>();
                GenerationResult result = model.generate(new GenerationRequest(prompt, 2000, sampling,
                        GenerationRequest.NO_LOGPROBS, false, Optional.of(OutputGrammar.jsonSchema(schema.toString(),
                        "json_schema"))), tokens::add);
                String text = model.detokenize(tokens.stream().mapToInt(GeneratedToken::id).toArray());
                String where = vocabulary + " schema " + schema + " gave " + text;
                assertEquals(FinishReason.END_OF_TEXT, result.finish(), where);
                JsonNode value = JSON.readTree(text);
                conforms(schema, value, where);
            }
        }
    }

    /** Fails unless {@code value} conforms to {@code schema} (the subset {@link RandomSchemas} writes). */
    static void conforms(JsonNode schema, JsonNode value, String where) {
        if (schema.has("const")) {
            assertEquals(schema.get("const"), value, where);
            return;
        }
        if (schema.has("enum")) {
            assertTrue(contains(schema.get("enum"), value), where + ": " + value + " is not in the enum");
            return;
        }
        if (schema.has("anyOf")) {
            for (JsonNode option : schema.get("anyOf")) {
                try {
                    conforms(option, value, where);
                    return;
                } catch (AssertionError notThisOne) {
                    // try the next
                }
            }
            fail(where + ": " + value + " matches no anyOf option");
        }
        switch (schema.get("type").asText()) {
            case "object" -> {
                assertTrue(value.isObject(), where + ": " + value + " is no object");
                Set<String> names = new HashSet<>();
                value.fieldNames().forEachRemaining(names::add);
                for (JsonNode r : schema.path("required")) {
                    assertTrue(names.contains(r.asText()), where + ": " + r + " is missing");
                }
                for (String n : names) {
                    assertTrue(schema.get("properties").has(n), where + ": " + n + " is not a property");
                    conforms(schema.get("properties").get(n), value.get(n), where);
                }
            }
            case "array" -> {
                assertTrue(value.isArray(), where + ": " + value + " is no array");
                assertTrue(value.size() >= schema.path("minItems").asInt(0), where + ": too few items");
                assertTrue(value.size() <= schema.path("maxItems").asInt(Integer.MAX_VALUE), where + ": too many");
                value.forEach(item -> conforms(schema.get("items"), item, where));
            }
            case "string" -> {
                assertTrue(value.isTextual(), where + ": " + value + " is no string");
                int length = value.textValue().codePointCount(0, value.textValue().length());
                assertTrue(length >= schema.path("minLength").asInt(0), where + ": string too short");
                assertTrue(length <= schema.path("maxLength").asInt(Integer.MAX_VALUE), where + ": too long");
            }
            case "integer" -> assertTrue(value.isIntegralNumber(), where + ": " + value + " is no integer");
            case "number" -> assertTrue(value.isNumber(), where + ": " + value + " is no number");
            case "boolean" -> assertTrue(value.isBoolean(), where + ": " + value + " is no boolean");
            case "null" -> assertTrue(value.isNull(), where + ": " + value + " is not null");
            default -> fail("unexpected type in " + schema);
        }
    }

    private static boolean contains(JsonNode values, JsonNode value) {
        for (JsonNode v : values) {
            if (v.equals(value)) {
                return true;
            }
        }
        return false;
    }

    /** Random schemas of the supported subset, bounded so that any conforming text is finite. */
    static final class RandomSchemas {
        private static final String[] NAMES = {"id", "name", "kind", "value", "tags", "ok", "note", "items", "x"};

        static ObjectNode object(SplittableRandom r, int depth) {
            ObjectNode s = JSON.createObjectNode().put("type", "object");
            ObjectNode properties = s.putObject("properties");
            ArrayNode required = JSON.createArrayNode();
            int n = 1 + r.nextInt(4);
            for (int i = 0; i < n; i++) {
                String name = NAMES[r.nextInt(NAMES.length)] + i;
                properties.set(name, any(r, depth + 1));
                if (r.nextBoolean()) {
                    required.add(name);
                }
            }
            if (!required.isEmpty()) {
                s.set("required", required);
            }
            s.put("additionalProperties", false);
            return s;
        }

        static JsonNode any(SplittableRandom r, int depth) {
            int kind = r.nextInt(depth >= 2 ? 7 : 10);
            return switch (kind) {
                case 0 -> JSON.createObjectNode().put("type", "string").put("maxLength", r.nextInt(6));
                case 1 -> JSON.createObjectNode().put("type", "integer");
                case 2 -> JSON.createObjectNode().put("type", "number");
                case 3 -> JSON.createObjectNode().put("type", "boolean");
                case 4 -> {
                    ObjectNode e = JSON.createObjectNode();
                    e.putArray("enum").add("red").add("green").add(3).addNull();
                    yield e;
                }
                case 5 -> JSON.createObjectNode().put("const", "fixed \"quoted\" é");
                case 6 -> {
                    ObjectNode a = JSON.createObjectNode();
                    a.putArray("anyOf").add(JSON.createObjectNode().put("type", "null"))
                            .add(JSON.createObjectNode().put("type", "string").put("minLength", 1)
                                    .put("maxLength", 3));
                    yield a;
                }
                case 7, 8 -> {
                    ObjectNode a = JSON.createObjectNode().put("type", "array");
                    a.set("items", any(r, depth + 1));
                    int min = r.nextInt(2);
                    a.put("minItems", min).put("maxItems", min + r.nextInt(3));
                    yield a;
                }
                default -> object(r, depth);
            };
        }
    }
}
