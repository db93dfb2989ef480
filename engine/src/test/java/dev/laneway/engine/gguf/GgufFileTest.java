package dev.laneway.engine.gguf;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GgufFileTest {

    @Test
    void readsStories260kMetadataAndTensors() throws Exception {
        GgufFile gguf = GgufFile.open(Shared.stories260kGguf());
        assertEquals(3, gguf.version());
        assertEquals("llama", gguf.string("general.architecture").orElseThrow());
        assertEquals(64L, gguf.integer("llama.embedding_length").orElseThrow());
        assertEquals(5L, gguf.integer("llama.block_count").orElseThrow());
        assertEquals(512, gguf.array("tokenizer.ggml.tokens").orElseThrow().length());
        Tensor emb = gguf.tensor("token_embd.weight").orElseThrow();
        assertEquals(DType.F32, emb.dtype());
        assertArrayEquals(new long[]{512, 64}, emb.shape());
        assertEquals(512 * 64 * 4, emb.data().remaining());
        assertTrue(gguf.tensors().size() > 10);
    }

    @Test
    void readsVocabularyOnlyFileThatEndsWithoutPadding() throws Exception {
        GgufFile gguf = GgufFile.open(Shared.model("vocab/ggml-vocab-bert-bge.gguf"));
        assertEquals(0, gguf.tensors().size());
        assertEquals("bert", gguf.string("tokenizer.ggml.model").orElseThrow());
        assertEquals(gguf.dataOffset(), java.nio.file.Files.size(gguf.path()));
    }
}
