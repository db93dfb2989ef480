package dev.laneway.engine.config;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The table's GGUF side: which architecture a file's {@code general.architecture} is, and its defaults. */
class ArchitectureTest {
    @Test
    void aGgufFilesArchitectureComesFromItsNameAndWhetherItHasExperts() {
        assertEquals("llama", type("llama", false));
        assertEquals("mixtral", type("llama", true));
        assertEquals("llama", type("mistral", false));  // llama.cpp reads a mistral file as a llama
        assertEquals("qwen3_moe", type("qwen3moe", true));
        assertEquals("gemma3", type("gemma3", false));
        assertEquals(Optional.empty(), Architecture.ofGguf("gpt2", false));
        assertEquals(List.of("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3", "qwen3moe"),
                Architecture.ggufNames());
    }

    @Test
    void gemmaTwosDefaultsAreTheReadersOwn() {
        Architecture.Defaults gemma2 = Architecture.of("gemma2").orElseThrow().defaults();
        assertEquals(4096, gemma2.slidingWindow());
        assertEquals(2, gemma2.windowPattern());
        assertEquals(1e6, gemma2.localRopeTheta(1e6), "one RoPE base for both kinds of layer");
        assertEquals(10000, Architecture.of("gemma3").orElseThrow().defaults().localRopeTheta(1e6));
        assertEquals(0, Architecture.of("llama").orElseThrow().defaults().slidingWindow());
    }

    private static String type(String gguf, boolean experts) {
        return Architecture.ofGguf(gguf, experts).orElseThrow().modelType();
    }
}
