package dev.laneway.engine.laya;

import dev.laneway.spi.Laya;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * A router checkpoint directory ({@code --laya DIR}): its policy, read and checked, and its scorer container, if it
 * has one.
 *
 * @param dir    the checkpoint
 * @param policy {@code route-policy.json}
 * @param scorer {@code scorer/}, when present
 */
public record LayaCheckpoint(Path dir, RoutePolicy policy, Optional<Path> scorer) {
    /** The route name the scorer's model reports. */
    public static final String SCORER_ROUTE = "laya-scorer";

    public LayaCheckpoint {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(scorer, "scorer");
    }

    /**
     * Reads a checkpoint; opens nothing.
     *
     * @throws LayaException naming the directory when it has no policy, or the policy's field that is wrong
     */
    public static LayaCheckpoint load(Path dir) throws LayaException {
        Optional<String> missing = Laya.missingCheckpoint(dir);
        if (missing.isPresent()) {
            throw new LayaException(missing.get());
        }
        Path file = dir.resolve(Laya.POLICY_FILE);
        RoutePolicy policy;
        try {
            policy = PolicyJson.parse(file, Files.readAllBytes(file));
        } catch (IOException e) {
            throw new LayaException("laya: " + e.getMessage(), e);
        }
        Path scorer = dir.resolve(Laya.SCORER_DIR);
        return new LayaCheckpoint(dir, policy, Files.isDirectory(scorer) ? Optional.of(scorer) : Optional.empty());
    }

    /**
     * The classifier: the scorer opened on the host by {@code opener}, or the heuristic when there is no scorer.
     *
     * @throws LayaException when the scorer cannot be opened or cannot pose the question
     */
    public Classifier openClassifier(ScoringModel.Opener opener) throws LayaException {
        if (scorer.isEmpty()) {
            return new HeuristicClassifier();
        }
        ScoringModel model;
        try {
            model = opener.open(scorer.get());
        } catch (IOException | RuntimeException e) {
            throw new LayaException("laya: the scorer " + scorer.get() + " cannot be opened: " + e.getMessage(), e);
        }
        try {
            return new ScorerClassifier(model, scorer.get().toString());
        } catch (RuntimeException e) {
            model.close();
            throw new LayaException("laya: the scorer " + scorer.get() + " cannot be used: " + e.getMessage(), e);
        }
    }
}
