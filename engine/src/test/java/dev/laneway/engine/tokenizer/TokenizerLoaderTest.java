package dev.laneway.engine.tokenizer;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.testing.Shared;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TokenizerLoaderTest {

    @Test
    void loadsADirectoryATokenizerJsonAndAGguf() throws Exception {
        Path dir = Shared.tinystoriesCheckpoint();
        try (TextTokenizer fromDir = TokenizerLoader.load(dir);
             TextTokenizer fromJson = TokenizerLoader.load(dir.resolve("tokenizer.json"));
             TextTokenizer fromGguf = TokenizerLoader.load(Shared.model("vocab/ggml-vocab-falcon.gguf"))) {
            assertArrayEquals(fromDir.encode("Once upon a time", true, true),
                    fromJson.encode("Once upon a time", true, true));
            assertEquals(65024, fromGguf.vocabSize());
        }
    }

    @Test
    void usesChatTemplateJinjaBesideTheTokenizer(@TempDir Path dir) throws Exception {
        Files.copy(Shared.tinystoriesCheckpoint().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        Files.writeString(dir.resolve("chat_template.jinja"), "{{ bos_token }}{{ messages[0]['content'] }}");
        Files.writeString(dir.resolve("generation_config.json"), "{\"eos_token_id\": [2, 0]}");
        try (TextTokenizer t = TokenizerLoader.load(dir)) {
            assertEquals("{{ bos_token }}{{ messages[0]['content'] }}", t.chatTemplateSource().orElseThrow());
            assertTrue(t.endOfGenerationIds().contains(0));
        }
    }

    @Test
    void namesWhatIsMissingOrBroken(@TempDir Path dir) throws Exception {
        IOException missing = assertThrows(IOException.class, () -> TokenizerLoader.load(dir.resolve("nope.gguf")));
        assertTrue(missing.getMessage().contains("nope.gguf"), missing.getMessage());
        FormatException noJson = assertThrows(FormatException.class, () -> TokenizerLoader.load(dir));
        assertTrue(noJson.getMessage().endsWith("no tokenizer.json in this model directory"), noJson.getMessage());
        Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": {\"type\": \"BPE\"}}");
        FormatException broken = assertThrows(FormatException.class, () -> TokenizerLoader.load(dir));
        assertTrue(broken.getMessage().contains("tokenizer.json"), broken.getMessage());
        Path notGguf = Files.writeString(dir.resolve("x.gguf"), "not a gguf file at all, just text");
        assertThrows(FormatException.class, () -> TokenizerLoader.load(notGguf));
    }

    /** Files that are not UTF-8 are refused as such, at the first bad byte, not with a bare MalformedInputException. */
    @Test
    void namesTextThatIsNotUtf8(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("tokenizer.json"), new byte[] {'{', '"', (byte) 0xC6, (byte) 0xE3, '"', '}'});
        FormatException json = assertThrows(FormatException.class, () -> TokenizerLoader.load(dir));
        assertEquals(dir.resolve("tokenizer.json") + " at byte 2: not UTF-8 text", json.getMessage());
        Files.copy(Shared.tinystoriesCheckpoint().resolve("tokenizer.json"), dir.resolve("tokenizer.json"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.write(dir.resolve("tokenizer_config.json"), new byte[] {'{', '}', (byte) 0xFF});
        FormatException config = assertThrows(FormatException.class, () -> TokenizerLoader.load(dir));
        assertEquals(dir.resolve("tokenizer_config.json") + " at byte 2: not UTF-8 text", config.getMessage());
    }

    @Test
    void loadsInTheBackgroundAndReportsFailuresAsThrown(@TempDir Path dir) throws Exception {
        BackgroundResult<TextTokenizer> loading = TokenizerLoader.loadInBackground(Shared.tinystoriesCheckpoint());
        try (TextTokenizer t = loading.get();
             TextTokenizer direct = TokenizerLoader.load(Shared.tinystoriesCheckpoint())) {
            assertArrayEquals(direct.encode("Once upon a time", true, true), t.encode("Once upon a time", true, true));
        }
        BackgroundResult<TextTokenizer> missing = TokenizerLoader.loadInBackground(dir);
        FormatException noJson = assertThrows(FormatException.class, missing::get);
        assertTrue(noJson.getMessage().endsWith("no tokenizer.json in this model directory"), noJson.getMessage());
    }

    @Test
    void theNativeLibraryRunsOfflineAndReportsNothing() throws Exception {
        try (TextTokenizer t = TokenizerLoader.load(Shared.tinystoriesCheckpoint())) {
            assertEquals("true", System.getProperty(NativeTokenizers.OFFLINE));
            assertEquals("true", System.getProperty(NativeTokenizers.NO_TRACKING));
            assertTrue(t.vocabSize() > 0);
        }
    }
}
