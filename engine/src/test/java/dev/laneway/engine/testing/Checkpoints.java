package dev.laneway.engine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Laya router checkpoints for tests: a policy file, and a scorer linked in when asked. */
public final class Checkpoints {
    private Checkpoints() {
    }

    /** A checkpoint in {@code dir} with this policy and no scorer (the heuristic classifies). */
    public static Path heuristic(Path dir, String policyJson) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("route-policy.json"), policyJson);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A checkpoint with this policy whose scorer is stories260K packed as an f32 container. */
    public static Path withStoriesScorer(Path dir, String policyJson) {
        heuristic(dir, policyJson);
        try {
            Files.createSymbolicLink(dir.resolve("scorer"), Packed.stories260k("f32"));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A policy: everything below {@code min} to {@code defaultDevice}, each class to its device when given. */
    public static String policy(double min, String defaultDevice, String code, String prose, String brief,
                                String longDoc) {
        return String.format(java.util.Locale.ROOT, "{\"min_confidence\": %s, \"default\": \"%s\", \"classes\": {"
                        + "\"code\": {\"device\": \"%s\", \"why\": \"code wants the fast lane\"}, "
                        + "\"prose\": {\"device\": \"%s\"}, \"short\": {\"device\": \"%s\"}, "
                        + "\"long_doc\": {\"device\": \"%s\"}}}", min, defaultDevice, code, prose, brief, longDoc);
    }
}
