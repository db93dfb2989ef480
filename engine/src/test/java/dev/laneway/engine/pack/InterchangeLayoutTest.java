package dev.laneway.engine.pack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tiled container Laneway writes meets the rules by which the 1bit engine's reader takes a {@code model.q4nx}
 * (docs/container.md): it reads the header as raw JSON (nothing of Laneway's reader is used here), takes every norm
 * and the embedding as raw BF16 bytes without looking at their dtype, the vocabulary from the embedding's rows,
 * requires {@code lm_head.weight} as tiles whether or not the model ties it, and sizes each tile tensor from
 * config.json; its converter aligns the header and every tensor to 64 bytes.
 */
class InterchangeLayoutTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<Long> TILE_BYTES = Set.of(5120L, 4736L, 8704L);

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"stories260k, q8", "stories260k, q4_1", "tinystories, q8", "tinystories, q4_1"})
    void aTiledPackIsLaidOutAsTheOtherEnginesReadIt(String model, String quant) throws IOException {
        Path dir = model.equals("stories260k") ? Packed.stories260k(quant) : Packed.tinystories(quant);
        ModelConfig c = ConfigJson.read(dir.resolve(Container.CONFIG));
        Path file = dir.resolve(Container.WEIGHTS);
        JsonNode header = header(file);
        long fileSize;
        try (FileChannel ch = FileChannel.open(file)) {
            fileSize = ch.size();
        }
        long base = 8 + headerLength(file);
        List<String> problems = new ArrayList<>();
        if ((base - 8) % 64 != 0) {
            problems.add("the header is " + (base - 8) + " bytes, not a multiple of 64");
        }
        header.fields().forEachRemaining(e -> {
            JsonNode offsets = e.getValue().get("data_offsets");
            if (offsets != null && base + offsets.get(1).asLong() > fileSize) {
                problems.add(e.getKey() + " ends past the file");
            }
            if (offsets != null && offsets.get(0).asLong() % 64 != 0) {
                problems.add(e.getKey() + " begins at " + offsets.get(0).asLong() + ", not 64-byte aligned");
            }
        });

        int hidden = c.hiddenSize();
        int q = c.numAttentionHeads() * c.headDim();
        int kv = c.numKeyValueHeads() * c.headDim();
        JsonNode embedding = require(header, "model.embed_tokens.weight", problems);
        if (embedding != null) {
            expect(problems, "model.embed_tokens.weight", "BF16", List.of((long) c.vocabSize(), (long) hidden),
                    embedding);
        }
        tiles(header, "lm_head.weight", c.vocabSize(), hidden, problems);
        vector(header, "model.norm.weight", hidden, problems);
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            String p = "model.layers." + l + ".";
            vector(header, p + "input_layernorm.weight", hidden, problems);
            vector(header, p + "post_attention_layernorm.weight", hidden, problems);
            tiles(header, p + "self_attn.q_proj.weight", q, hidden, problems);
            tiles(header, p + "self_attn.k_proj.weight", kv, hidden, problems);
            tiles(header, p + "self_attn.v_proj.weight", kv, hidden, problems);
            tiles(header, p + "self_attn.o_proj.weight", hidden, q, problems);
            tiles(header, p + "mlp.gate_proj.weight", c.intermediateSize(), hidden, problems);
            tiles(header, p + "mlp.up_proj.weight", c.intermediateSize(), hidden, problems);
            tiles(header, p + "mlp.down_proj.weight", hidden, c.intermediateSize(), problems);
        }
        header.fields().forEachRemaining(e -> {
            JsonNode shape = e.getValue().get("shape");
            if (shape != null && shape.size() == 1 && !e.getValue().get("dtype").asText().equals("BF16")) {
                problems.add(e.getKey() + " is " + e.getValue().get("dtype").asText() + ", read as raw BF16");
            }
        });
        Map<String, String> metadata = JSON.convertValue(header.get("__metadata__"), Map.class);
        assertEquals("q4nx", metadata.get("format"));
        assertTrue(metadata.containsKey("shape:lm_head.weight"), "the shape: keys are kept: " + metadata.keySet());
        assertEquals(List.of(), problems, model + " " + quant);
    }

    @Test
    void packingSaysWhenTilesArePadded(@TempDir Path dir) throws IOException {
        assertEquals(1, notes(Shared.stories260kGguf(), dir.resolve("stories")).size());
        assertTrue(notes(Shared.stories260kGguf(), dir.resolve("stories2")).get(0)
                .startsWith("36 weight matrices are not whole 32x256 tiles"));
        Path whole = dir.resolve("whole.gguf");
        RandomModel.write(new ModelShape(256, 1, 4, 4, 512, 512, 128), DType.Q8_0, 3, whole);
        assertEquals(List.of(), notes(whole, dir.resolve("whole")));
    }

    private static List<String> notes(Path gguf, Path target) throws IOException {
        List<String> notes = new ArrayList<>();
        PackProgress progress = new PackProgress() {
            @Override
            public void update(String what, long done, long total) {
            }

            @Override
            public void note(String message) {
                notes.add(message);
            }
        };
        new GgufPacker().pack(gguf, target, new PackOptions(Optional.of("q8"), false), progress);
        return notes;
    }

    private static JsonNode require(JsonNode header, String name, List<String> problems) {
        JsonNode t = header.get(name);
        if (t == null) {
            problems.add("no " + name);
        }
        return t;
    }

    private static void vector(JsonNode header, String name, int length, List<String> problems) {
        JsonNode t = require(header, name, problems);
        if (t != null) {
            expect(problems, name, "BF16", List.of((long) length), t);
        }
    }

    private static void tiles(JsonNode header, String name, int rows, int cols, List<String> problems) {
        JsonNode t = require(header, name, problems);
        if (t == null) {
            return;
        }
        JsonNode shape = t.get("shape");
        long chunk = shape.get(shape.size() - 1).asLong();
        long tiles = shape.size() == 3 ? shape.get(0).asLong() * shape.get(1).asLong() : shape.get(0).asLong();
        long expected = (long) ((rows + 31) / 32) * ((cols + 255) / 256);
        JsonNode offsets = t.get("data_offsets");
        if (!t.get("dtype").asText().equals("I8") || !TILE_BYTES.contains(chunk) || tiles != expected
                || offsets.get(1).asLong() - offsets.get(0).asLong() != tiles * chunk) {
            problems.add(name + " " + t + " is not " + expected + " tiles of a " + rows + "x" + cols + " matrix");
        }
    }

    private static void expect(List<String> problems, String name, String dtype, List<Long> shape, JsonNode t) {
        List<Long> actual = new ArrayList<>();
        t.get("shape").forEach(d -> actual.add(d.asLong()));
        if (!t.get("dtype").asText().equals(dtype) || !actual.equals(shape)) {
            problems.add(name + " is " + t.get("dtype").asText() + " " + actual + ", expected " + dtype + " " + shape);
        }
    }

    private static long headerLength(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file)) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, 0);
            return b.getLong(0);
        }
    }

    private static JsonNode header(Path file) throws IOException {
        long n = headerLength(file);
        try (FileChannel ch = FileChannel.open(file)) {
            ByteBuffer b = ByteBuffer.allocate((int) n);
            ch.read(b, 8);
            return JSON.readTree(b.array());
        }
    }
}
