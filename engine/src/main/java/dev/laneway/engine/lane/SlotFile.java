package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.SlotTransfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A stream's KV cache in a file (llama-server's slot save and restore). It opens as llama.cpp's sequence state files
 * do, with the tokens the stream holds as llama-server lists them, so that what a file holds reads the same in both;
 * the keys and values that follow are this engine's, and only a model of the same shape reads them back.
 *
 * <p>Little-endian: u32 magic {@code ggsq}, u32 version 3, u32 n, then n 32-bit words of tokens, llama-server's
 * packed form (-1, u32 1, u32 count, the tokens, u32 0 media chunks) or a plain list of tokens; then u32 magic
 * {@code LWKV}, u32 1, u32 precision (0 half, 1 single), u32 layers, u32 kvDim, u32 positions (one per token), and
 * per layer the keys of those positions, then their values.
 */
final class SlotFile {
    static final int TOKENS_MAGIC = 0x67677371;
    static final int TOKENS_VERSION = 3;
    static final int PACKED_VERSION = 1;
    static final int KV_MAGIC = 0x564b574c;
    static final int KV_VERSION = 1;
    private static final int CHUNK = 1 << 20;

    private SlotFile() {
    }

    /** Writes slot {@code slot}'s tokens and keys and values to {@code file}, replacing it whole or not at all. */
    static SlotTransfer save(KvCache kv, CachedTokens cached, int slot, Path file) {
        long start = System.nanoTime();
        int[] tokens = cached.tokens();
        Path part = file.resolveSibling(file.getFileName() + ".part");
        try {
            Files.deleteIfExists(part);
            long bytes;
            try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer head = words(3 + 4 + tokens.length + 6);
                head.putInt(TOKENS_MAGIC).putInt(TOKENS_VERSION).putInt(4 + tokens.length);
                head.putInt(-1).putInt(PACKED_VERSION).putInt(tokens.length);
                for (int t : tokens) {
                    head.putInt(t);
                }
                head.putInt(0);
                head.putInt(KV_MAGIC).putInt(KV_VERSION).putInt(code(kv.precision()))
                        .putInt(kv.layers()).putInt(kv.kvDim()).putInt(tokens.length);
                write(out, head.flip());
                int n = tokens.length * kv.kvDim();
                for (int l = 0; l < kv.layers(); l++) {
                    KvCache.Layer layer = kv.layer(l);
                    int base = layer.index(layer.base(slot));
                    writeElements(out, layer.keyArray(), base, layer.index(n));
                    writeElements(out, layer.valueArray(), base, layer.index(n));
                }
                out.force(true);
                bytes = out.size();
            }
            Files.move(part, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return new SlotTransfer(tokens.length, bytes, (System.nanoTime() - start) / 1e6);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(part);
            } catch (IOException ignored) {
                // the write failed already; that is what is reported
            }
            throw new InvalidRequestException("filename", "cannot write " + file.getFileName() + ": " + e.getMessage());
        }
    }

    /**
     * Fills slot {@code slot} from {@code file}; on any error the slot is left empty and the error names what is wrong.
     */
    static SlotTransfer restore(KvCache kv, CachedTokens cached, int slot, Path file, int vocab) {
        long start = System.nanoTime();
        cached.clear();
        String name = String.valueOf(file.getFileName());
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = in.size();
            ByteBuffer head = read(in, 12, name);
            if (head.getInt() != TOKENS_MAGIC || head.getInt() != TOKENS_VERSION) {
                throw refused(name, "is not a slot file");
            }
            long words = Integer.toUnsignedLong(head.getInt());
            if (12 + 4 * words > size) {
                throw refused(name, "lists " + words + " token words, more than the file holds");
            }
            if (words > kv.contextLength() + 16L) {
                throw refused(name, "holds more tokens than this model's context of " + kv.contextLength());
            }
            int[] tokens = tokens(read(in, (int) (4 * words), name), (int) words, name);
            ByteBuffer kvHead = read(in, 24, name);
            if (kvHead.getInt() != KV_MAGIC || kvHead.getInt() != KV_VERSION) {
                throw refused(name, "holds no keys and values this server wrote (a file of another server?)");
            }
            int precision = kvHead.getInt();
            int layers = kvHead.getInt();
            int kvDim = kvHead.getInt();
            int positions = kvHead.getInt();
            int ours = code(kv.precision());
            if (precision != ours || layers != kv.layers() || kvDim != kv.kvDim()) {
                throw refused(name, "was written for another model or KV cache (" + layers + " layers of " + kvDim
                        + " keys in " + named(precision) + "; this one has " + kv.layers() + " of " + kv.kvDim()
                        + " in " + named(ours) + ")");
            }
            if (positions != tokens.length) {
                throw refused(name, "has keys for " + positions + " positions and " + tokens.length + " tokens");
            }
            if (positions >= kv.contextLength()) {
                throw refused(name, "holds " + positions + " positions; this model's context holds "
                        + kv.contextLength() + ", with room for a token more");
            }
            for (int t : tokens) {
                if (t < 0 || t >= vocab) {
                    throw refused(name, "holds token " + t + ", outside the vocabulary of " + vocab);
                }
            }
            long expected = 12 + 4 * words + 24 + 2L * layers * kv.precision().bytes((long) positions * kvDim);
            if (size != expected) {
                throw refused(name, "is " + size + " bytes; its header says " + expected);
            }
            kv.reserve(positions);
            int n = positions * kvDim;
            for (int l = 0; l < layers; l++) {
                KvCache.Layer layer = kv.layer(l);
                int base = layer.index(layer.base(slot));
                readElements(in, layer.keyArray(), base, layer.index(n), name);
                readElements(in, layer.valueArray(), base, layer.index(n), name);
            }
            cached.append(tokens, 0, tokens.length);
            return new SlotTransfer(tokens.length, size, (System.nanoTime() - start) / 1e6);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new InvalidRequestException("filename", "no slot file " + name);
        } catch (IOException e) {
            throw new InvalidRequestException("filename", "cannot read slot file " + name + ": " + e.getMessage());
        }
    }

    /** The tokens of llama-server's packed list, or of a plain list. */
    private static int[] tokens(ByteBuffer words, int n, String name) {
        if (n == 0 || words.getInt(0) != -1) {
            int[] tokens = new int[n];
            words.asIntBuffer().get(tokens);
            return tokens;
        }
        if (n < 4 || words.getInt(4) != PACKED_VERSION) {
            throw refused(name, "lists its tokens in a form of another version");
        }
        int count = words.getInt(8);
        if (count < 0 || count > n - 4) {
            throw refused(name, "lists " + count + " tokens in " + n + " words");
        }
        int[] tokens = new int[count];
        words.position(12);
        words.asIntBuffer().get(tokens);
        int media = words.getInt(12 + 4 * count);
        if (media != 0 || n != count + 4) {
            throw refused(name, "holds images or other media, which this server's models do not read");
        }
        return tokens;
    }

    private static InvalidRequestException refused(String name, String why) {
        return new InvalidRequestException("filename", "slot file " + name + " " + why);
    }

    private static ByteBuffer words(int n) {
        return ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static ByteBuffer read(FileChannel in, int bytes, String name) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (in.read(b) < 0) {
                throw refused(name, "ends early");
            }
        }
        return b.flip();
    }

    private static void write(FileChannel out, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            out.write(b);
        }
    }

    /** Writes {@code n} entries of a cache array (floats, half-precision bits, or eight-bit blocks), in chunks. */
    private static void writeElements(FileChannel out, Object array, int from, int n) throws IOException {
        int size = entryBytes(array);
        for (int done = 0; done < n; ) {
            int m = Math.min(CHUNK, n - done);
            ByteBuffer b = ByteBuffer.allocate(size * m).order(ByteOrder.LITTLE_ENDIAN);
            if (array instanceof short[] shorts) {
                b.asShortBuffer().put(shorts, from + done, m);
            } else if (array instanceof float[] floats) {
                b.asFloatBuffer().put(floats, from + done, m);
            } else {
                b.put((byte[]) array, from + done, m).flip();
            }
            write(out, b);
            done += m;
        }
    }

    /** Reads {@code n} entries into a cache array, in chunks. */
    private static void readElements(FileChannel in, Object array, int from, int n, String name) throws IOException {
        int size = entryBytes(array);
        for (int done = 0; done < n; ) {
            int m = Math.min(CHUNK, n - done);
            ByteBuffer b = read(in, size * m, name);
            if (array instanceof short[] shorts) {
                b.asShortBuffer().get(shorts, from + done, m);
            } else if (array instanceof float[] floats) {
                b.asFloatBuffer().get(floats, from + done, m);
            } else {
                b.get((byte[]) array, from + done, m);
            }
            done += m;
        }
    }

    private static int entryBytes(Object array) {
        return array instanceof short[] ? 2 : array instanceof float[] ? 4 : 1;
    }

    /** A precision's number in the file: 0 half, 1 single, 2 eight-bit blocks. */
    private static int code(KvCache.Precision precision) {
        return switch (precision) {
            case F16 -> 0;
            case F32 -> 1;
            case Q8 -> 2;
        };
    }

    private static String named(int code) {
        return switch (code) {
            case 0 -> "half precision";
            case 1 -> "single precision";
            case 2 -> "eight-bit blocks";
            default -> "an unknown precision (" + code + ")";
        };
    }
}
