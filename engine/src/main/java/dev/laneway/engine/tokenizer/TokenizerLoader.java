package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * Opens the tokenizer of a model, wherever it lives: a model directory (its {@code tokenizer.json}, with
 * {@code tokenizer_config.json}, {@code chat_template.jinja} and {@code generation_config.json} when present), a
 * {@code tokenizer.json} file, or a GGUF file (a full model or a vocabulary-only file), converted in memory.
 */
public final class TokenizerLoader {
    private TokenizerLoader() {
    }

    public static TextTokenizer load(Path path) throws IOException {
        if (Files.isDirectory(path)) {
            return fromDirectory(path);
        }
        if (!Files.isRegularFile(path)) {
            throw new IOException(path + ": no such file or directory");
        }
        if (path.getFileName().toString().endsWith(".json")) {
            return fromFiles(path, path.resolveSibling("tokenizer_config.json"));
        }
        return fromGguf(GgufFile.open(path));
    }

    /** {@link #load} on a thread of its own. */
    public static BackgroundResult<TextTokenizer> loadInBackground(Path path) {
        return BackgroundResult.start("laneway-tokenizer-loader", () -> load(path));
    }

    /** The tokenizer of a GGUF file: its vocabulary converted to Hugging Face files in memory. */
    public static TextTokenizer fromGguf(GgufFile gguf) throws IOException {
        HfTokenizerFiles files = GgufTokenizerConverter.convert(gguf);
        return TextTokenizer.create(files.tokenizerJson(), TokenizerConfig.parse(files.tokenizerConfigJson()),
                Set.of());
    }

    private static TextTokenizer fromDirectory(Path dir) throws IOException {
        Path json = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(json)) {
            throw new FormatException(dir, "no tokenizer.json in this model directory");
        }
        return fromFiles(json, dir.resolve("tokenizer_config.json"));
    }

    private static TextTokenizer fromFiles(Path json, Path configFile) throws IOException {
        Path dir = json.toAbsolutePath().getParent();
        TokenizerConfig config = TokenizerConfig.EMPTY;
        if (Files.isRegularFile(configFile)) {
            String text = utf8(configFile);
            try {
                config = TokenizerConfig.parse(text);
            } catch (IOException e) {
                throw new FormatException(configFile, e.getMessage());
            }
        }
        Path jinja = dir.resolve("chat_template.jinja");
        if (config.chatTemplate().isEmpty() && Files.isRegularFile(jinja)) {
            config = config.withChatTemplate(utf8(jinja));
        }
        try {
            return TextTokenizer.create(utf8(json), config,
                    generationEndIds(dir.resolve("generation_config.json")));
        } catch (FormatException e) {
            throw e;
        } catch (IOException e) {
            throw new FormatException(json, e.getMessage());
        }
    }

    /** A file's text, which must be UTF-8: a malformed byte is reported as such, against the file. */
    private static String utf8(Path file) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(bytes).toString();
        } catch (CharacterCodingException e) {
            throw new FormatException(file, bytes.position(), "not UTF-8 text");
        }
    }

    /** {@code eos_token_id} of a {@code generation_config.json}: one id or a list. */
    private static Set<Integer> generationEndIds(Path file) throws IOException {
        Set<Integer> ids = new HashSet<>();
        if (!Files.isRegularFile(file)) {
            return ids;
        }
        JsonNode eos;
        try {
            eos = new ObjectMapper().readTree(file.toFile()).path("eos_token_id");
        } catch (IOException e) {
            throw new FormatException(file, "not JSON: " + e.getMessage());
        }
        if (eos.isInt()) {
            ids.add(eos.asInt());
        }
        eos.forEach(id -> {
            if (id.isInt()) {
                ids.add(id.asInt());
            }
        });
        return ids;
    }
}
