package dev.laneway.spi;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Facts about a Laya router checkpoint ({@code --laya DIR}) that the runtime and routes share. The checkpoint is a
 * directory holding {@value #POLICY_FILE} and, optionally, a scorer container in {@value #SCORER_DIR}; the project's
 * {@code docs/laya.md} describes both.
 */
public final class Laya {
    /** The policy: classes, their devices, the confidence threshold and the default device. */
    public static final String POLICY_FILE = "route-policy.json";
    /** The optional classifier: a model container. */
    public static final String SCORER_DIR = "scorer";
    /** The response header that shows a request's decision ({@link RouteDecision#describe()}). */
    public static final String HEADER = "X-Laneway-Route";

    private Laya() {
    }

    /**
     * Why {@code dir} is not a checkpoint, when it is not one: {@code laya: no checkpoint at DIR (expected
     * route-policy.json)}. Looks at the file system only.
     */
    public static Optional<String> missingCheckpoint(Path dir) {
        if (Files.isRegularFile(dir.resolve(POLICY_FILE))) {
            return Optional.empty();
        }
        return Optional.of("laya: no checkpoint at " + dir + " (expected " + POLICY_FILE + ")");
    }
}
