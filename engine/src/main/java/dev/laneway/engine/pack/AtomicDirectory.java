package dev.laneway.engine.pack;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A directory that appears complete or not at all: it is written under a temporary name beside its target and
 * renamed into place at the end, so an interrupted pack leaves nothing that looks valid.
 */
final class AtomicDirectory implements AutoCloseable {
    private final Path target;
    private final Path partial;
    private boolean committed;

    private AtomicDirectory(Path target, Path partial) {
        this.target = target;
        this.partial = partial;
    }

    /** Starts writing {@code target}, which must not exist. */
    static AtomicDirectory begin(Path target) throws IOException {
        Path t = target.toAbsolutePath().normalize();
        if (Files.exists(t)) {
            throw new FileAlreadyExistsException(t.toString(), null, "the output directory exists already");
        }
        Files.createDirectories(t.getParent());
        return new AtomicDirectory(t, Files.createTempDirectory(t.getParent(), "." + t.getFileName() + ".partial-"));
    }

    /** Where to write the files meanwhile. */
    Path dir() {
        return partial;
    }

    /** Moves the finished directory into place. */
    void commit() throws IOException {
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        committed = true;
    }

    /** Deletes the partial directory unless it was committed. */
    @Override
    public void close() throws IOException {
        if (committed || !Files.exists(partial)) {
            return;
        }
        try (Stream<Path> files = Files.walk(partial)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
