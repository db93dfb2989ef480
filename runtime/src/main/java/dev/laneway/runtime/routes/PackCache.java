package dev.laneway.runtime.routes;

import dev.laneway.spi.ModelPacker;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.stream.Stream;

/**
 * Serving a {@code .gguf} file or a Hugging Face checkpoint directory: it is packed once into
 * {@code <cache>/q4nx/<stem>-<content hash>} and the container is reused for as long as the source's content is the
 * same.
 */
public final class PackCache {
    /** Bytes of the file that the content hash reads: its head, its tail and evenly spaced samples between. */
    private static final int SAMPLE_BYTES = 1 << 20;
    private static final int SAMPLES = 32;
    /**
     * Part of every hash, changed when packing a file would give another container than before, so that caches made
     * by earlier builds are packed again (2: 4-bit files are packed at 4 bits by default; 3: tiled containers laid out
     * as the other Q4NX engines read them, q/k rows in Hugging Face's order; 4: the pooling a model declares kept in
     * {@code 1_Pooling/config.json}; 5: Q4_K matrices packed as Q4_K tiles, at their own bits).
     */
    private static final String PACKING = "packing 5";

    private final Path cacheRoot;

    public PackCache(Path cacheDir) {
        this.cacheRoot = cacheDir.resolve("q4nx");
    }

    /** The container directory for {@code source}, if it has been packed already. */
    public Optional<Path> current(ModelLocator.Packable source) throws IOException {
        Path dir = containerDir(source);
        return Files.isRegularFile(dir.resolve(ModelLocator.CONTAINER_WEIGHTS)) ? Optional.of(dir) : Optional.empty();
    }

    /** The container directory for {@code source}, packing it first when it is not in the cache. */
    public Path containerFor(ModelLocator.Packable source, PackProgress progress) throws IOException {
        Optional<Path> cached = current(source);
        if (cached.isPresent()) {
            return cached.get();
        }
        ModelPacker packer = packerFor(source.path()).orElseThrow(() -> new IOException(
                "serving " + source.path() + " needs a packer, and none in this build reads it"));
        Path dir = containerDir(source);
        Files.createDirectories(dir.getParent());
        try {
            packer.pack(source.path(), dir, PackOptions.defaults(), progress);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // Another process packed the same source meanwhile; its container is as good as ours.
            if (current(source).isEmpty()) {
                throw e;
            }
        }
        return dir;
    }

    /** The directory a source's container lives in: its stem and a hash of its content. */
    public Path containerDir(ModelLocator.Packable source) throws IOException {
        return cacheRoot.resolve(source.stem() + "-" + contentHash(source.path()));
    }

    /** A packer that reads {@code source}, found through {@link ServiceLoader}. */
    public static Optional<ModelPacker> packerFor(Path source) {
        for (ModelPacker packer : ServiceLoader.load(ModelPacker.class, PackCache.class.getClassLoader())) {
            if (packer.reads(source)) {
                return Optional.of(packer);
            }
        }
        return Optional.empty();
    }

    /**
     * SHA-256 over the packing version and, for the file or each file of the directory (by name), its name, size,
     * first and last MiB and 32 evenly spaced MiB between: a changed source changes its hash in practice, and a
     * multi-gigabyte file is not read whole on every start.
     */
    static String contentHash(Path source) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
        sha.update(PACKING.getBytes(StandardCharsets.US_ASCII));
        if (!Files.isDirectory(source)) {
            sample(source, sha);
        } else {
            List<Path> files;
            try (Stream<Path> list = Files.list(source)) {
                files = list.filter(Files::isRegularFile).sorted().toList();
            }
            for (Path file : files) {
                sha.update(file.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                sample(file, sha);
            }
        }
        return HexFormat.of().formatHex(sha.digest(), 0, 8);
    }

    private static void sample(Path file, MessageDigest sha) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            sha.update(ByteBuffer.allocate(Long.BYTES).putLong(size).array());
            ByteBuffer buf = ByteBuffer.allocate(SAMPLE_BYTES);
            long stride = Math.max(1, (size - SAMPLE_BYTES) / (SAMPLES + 1));
            for (long pos = 0; pos < size; pos += size <= (long) SAMPLE_BYTES * (SAMPLES + 2) ? SAMPLE_BYTES : stride) {
                readAt(ch, buf, pos, sha);
            }
            readAt(ch, buf, Math.max(0, size - SAMPLE_BYTES), sha);
        }
    }

    private static void readAt(FileChannel ch, ByteBuffer buf, long pos, MessageDigest sha) throws IOException {
        buf.clear();
        while (buf.hasRemaining()) {
            if (ch.read(buf, pos + buf.position()) < 0) {
                break;
            }
        }
        buf.flip();
        sha.update(buf);
    }
}
