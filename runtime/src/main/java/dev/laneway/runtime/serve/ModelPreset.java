package dev.laneway.runtime.serve;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A models preset file ({@code --models-preset}), INI as llama-server's: a section per model, named by the model's id,
 * with {@code key = value} lines; a {@code [*]} section holds what every model gets unless its own section says
 * otherwise. {@code ;} and {@code #} begin comments. A key this server does not know is refused by name.
 */
final class ModelPreset {
    /** The keys a section may hold; {@code opt} and {@code tags} may be given on several lines. */
    static final Set<String> KEYS = Set.of("model", "alias", "opt", "streams", "laya", "device", "keep-alive",
            "pinned", "load-on-startup", "tags");
    /** What a section holds: each key's values, in the order given. */
    record Section(String name, Map<String, List<String>> values) {
        /** The one value of {@code key}, when given; the last when given more than once. */
        java.util.Optional<String> one(String key) {
            List<String> v = values.get(key);
            return v == null ? java.util.Optional.empty() : java.util.Optional.of(v.get(v.size() - 1));
        }

        List<String> all(String key) {
            return values.getOrDefault(key, List.of());
        }
    }

    /** The sections as the file orders them, the {@code [*]} section under {@code *}. */
    static Map<String, Section> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the models preset " + file + ": " + e.getMessage());
        }
        Map<String, Section> sections = new LinkedHashMap<>();
        Section current = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            String where = file.getFileName() + " line " + (i + 1);
            if (line.isEmpty() || line.startsWith(";") || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("[")) {
                if (!line.endsWith("]") || line.length() < 3) {
                    throw new IllegalArgumentException(where + ": a section is written [name], was " + line);
                }
                String name = line.substring(1, line.length() - 1).strip();
                if (sections.containsKey(name)) {
                    throw new IllegalArgumentException(where + ": the section [" + name + "] is given twice");
                }
                current = new Section(name, new LinkedHashMap<>());
                sections.put(name, current);
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(where + ": expected key = value, was " + line);
            }
            String key = line.substring(0, eq).strip();
            String value = line.substring(eq + 1).strip();
            if (current == null) {
                if (key.equals("version") && value.equals("1")) {
                    continue;  // llama-server's file version
                }
                throw new IllegalArgumentException(where + ": " + key + " stands before any [section]");
            }
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(where + ": unknown key " + key + " (known: "
                        + String.join(", ", KEYS.stream().sorted().toList()) + ")");
            }
            current.values().computeIfAbsent(key, k -> new ArrayList<>()).add(value);
        }
        return sections;
    }
}
