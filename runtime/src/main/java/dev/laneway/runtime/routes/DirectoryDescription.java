package dev.laneway.runtime.routes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** A one-line description of a model directory for messages: which files it holds and its declared architecture. */
final class DirectoryDescription {
    private static final Pattern MODEL_TYPE = Pattern.compile("\"model_type\"\\s*:\\s*\"([^\"]{1,64})\"");
    private static final int MAX_FILES_NAMED = 8;
    private static final long MAX_CONFIG_BYTES = 1 << 20;

    private DirectoryDescription() {
    }

    static String describe(Path dir) {
        if (!Files.isDirectory(dir)) {
            return "no directory";
        }
        List<String> names;
        try (Stream<Path> files = Files.list(dir)) {
            names = files.map(p -> p.getFileName().toString() + (Files.isDirectory(p) ? "/" : "")).sorted().toList();
        } catch (IOException e) {
            return "an unreadable directory (" + e.getMessage() + ")";
        }
        if (names.isEmpty()) {
            return "nothing";
        }
        String listed = String.join(", ", names.subList(0, Math.min(names.size(), MAX_FILES_NAMED)))
                + (names.size() > MAX_FILES_NAMED ? " and " + (names.size() - MAX_FILES_NAMED) + " more" : "");
        return modelType(dir.resolve("config.json")).map(t -> "model_type '" + t + "' in " + listed).orElse(listed);
    }

    private static Optional<String> modelType(Path config) {
        try {
            if (!Files.isRegularFile(config) || Files.size(config) > MAX_CONFIG_BYTES) {
                return Optional.empty();
            }
            Matcher m = MODEL_TYPE.matcher(Files.readString(config));
            return m.find() ? Optional.of(m.group(1)) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
