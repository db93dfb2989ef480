package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.SlotTransfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stream's KV cache saved to a file and read back into another slot (and another cache of the same shape) holds the
 * same tokens, keys and values; the file opens as llama.cpp's sequence state files with llama-server's token list, and
 * a file of the other list form, of another shape, cut short or not a slot file at all is refused by name, leaving the
 * slot empty.
 */
class SlotFileTest {
    private static final int LAYERS = 3;
    private static final int CONTEXT = 64;
    private static final int KV_DIM = 32;  // a whole block of an eight-bit cache
    private static final int VOCAB = 100;

    @TempDir
    Path dir;

    private static KvCache filled(KvCache.Precision precision, int slots, long seed) {
        KvCache kv = KvCache.onDemand(LAYERS, CONTEXT, KV_DIM, precision, slots);
        kv.reserve(CONTEXT);
        Random random = new Random(seed);
        for (int l = 0; l < LAYERS; l++) {
            float[] k = new float[CONTEXT * KV_DIM];
            float[] v = new float[CONTEXT * KV_DIM];
            for (int i = 0; i < k.length; i++) {
                k[i] = (float) random.nextGaussian();
                v[i] = (float) random.nextGaussian();
            }
            for (int s = 0; s < slots; s++) {
                kv.layer(l).store(k, v, 0, CONTEXT, s, 0);
            }
        }
        return kv;
    }

    /** Entries from .. from + n of a cache array, as a list to compare. */
    private static java.util.List<Object> stored(Object array, int from, int n) {
        java.util.List<Object> entries = new java.util.ArrayList<>();
        for (int i = from; i < from + n; i++) {
            entries.add(java.lang.reflect.Array.get(array, i));
        }
        return entries;
    }

    private static CachedTokens tokens(int... ids) {
        CachedTokens cached = new CachedTokens();
        cached.append(ids, 0, ids.length);
        return cached;
    }

    @Test
    void aSavedSlotRestoresIntoAnotherSlotWithItsKeysAndValues() {
        for (KvCache.Precision precision : KvCache.Precision.values()) {
            KvCache source = filled(precision, 2, 1);
            int[] ids = {1, 5, 9, 42, 7};
            Path file = dir.resolve("slot-" + precision + ".bin");
            SlotTransfer saved = SlotFile.save(source, tokens(ids), 1, file);
            assertEquals(ids.length, saved.tokens());
            assertEquals(Files.exists(file) ? fileSize(file) : -1, saved.bytes());
            assertFalse(Files.exists(dir.resolve(file.getFileName() + ".part")));

            KvCache target = filled(precision, 3, 2);
            CachedTokens restoredTokens = tokens(3, 3, 3);
            SlotTransfer restored = SlotFile.restore(target, restoredTokens, 2, file, VOCAB);
            assertEquals(ids.length, restored.tokens());
            assertEquals(saved.bytes(), restored.bytes());
            assertArrayEquals(ids, restoredTokens.tokens());
            for (int l = 0; l < LAYERS; l++) {
                int n = ids.length * KV_DIM;
                KvCache.Layer from = source.layer(l);
                KvCache.Layer to = target.layer(l);
                assertEquals(stored(from.keyArray(), from.index(from.base(1)), from.index(n)),
                        stored(to.keyArray(), to.index(to.base(2)), to.index(n)), precision + " keys");
                assertEquals(stored(from.valueArray(), from.index(from.base(1)), from.index(n)),
                        stored(to.valueArray(), to.index(to.base(2)), to.index(n)), precision + " values");
            }
        }
    }

    /** The header llama.cpp writes (magic, version, words) and llama-server's packed list (-1, 1, count, ids, 0). */
    @Test
    void theFileOpensWithLlamaCppsHeaderAndLlamaServersTokenList() throws IOException {
        Path file = dir.resolve("s.bin");
        SlotFile.save(filled(KvCache.Precision.F16, 1, 3), tokens(4, 8, 15), 0, file);
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x67677371, b.getInt());
        assertEquals(3, b.getInt());
        assertEquals(3 + 4, b.getInt());
        assertEquals(-1, b.getInt());
        assertEquals(1, b.getInt());
        assertEquals(3, b.getInt());
        assertEquals(4, b.getInt());
        assertEquals(8, b.getInt());
        assertEquals(15, b.getInt());
        assertEquals(0, b.getInt());
    }

    /** A file whose tokens are a plain list (as llama-server wrote them before its packed form) restores too. */
    @Test
    void aPlainTokenListRestores() throws IOException {
        Path file = dir.resolve("plain.bin");
        KvCache kv = filled(KvCache.Precision.F32, 1, 4);
        SlotFile.save(kv, tokens(4, 8, 15), 0, file);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer out = ByteBuffer.allocate(bytes.length - 16).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(0x67677371).putInt(3).putInt(3);
        out.put(bytes, 24, 12);                      // the three ids
        out.put(bytes, 40, bytes.length - 40);       // after the media count: the keys and values
        Files.write(file, out.array());
        CachedTokens cached = new CachedTokens();
        assertEquals(3, SlotFile.restore(filled(KvCache.Precision.F32, 1, 5), cached, 0, file, VOCAB).tokens());
        assertArrayEquals(new int[]{4, 8, 15}, cached.tokens());
    }

    @Test
    void badFilesAreRefusedByNameAndLeaveTheSlotEmpty() throws IOException {
        Path good = dir.resolve("good.bin");
        SlotFile.save(filled(KvCache.Precision.F16, 1, 6), tokens(1, 2, 3, 4), 0, good);
        byte[] bytes = Files.readAllBytes(good);

        assertRefused("no slot file missing.bin", dir.resolve("missing.bin"), KvCache.Precision.F16, VOCAB);
        assertRefused("is not a slot file", write("text.bin", "hello, world".getBytes()), KvCache.Precision.F16,
                VOCAB);
        assertRefused("ends early", write("cut.bin", Arrays.copyOf(bytes, 50)), KvCache.Precision.F16, VOCAB);
        assertRefused("bytes; its header says", write("short.bin", Arrays.copyOf(bytes, bytes.length - 2)),
                KvCache.Precision.F16, VOCAB);
        assertRefused("another model or KV cache", good, KvCache.Precision.F32, VOCAB);
        assertRefused("outside the vocabulary", good, KvCache.Precision.F16, 3);
        byte[] huge = bytes.clone();
        ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putInt(8, Integer.MAX_VALUE);
        assertRefused("more than the file holds", write("huge.bin", huge), KvCache.Precision.F16, VOCAB);
        byte[] media = bytes.clone();
        ByteBuffer.wrap(media).order(ByteOrder.LITTLE_ENDIAN).putInt(12 + 4 * 7, 1);
        assertRefused("images or other media", write("media.bin", media), KvCache.Precision.F16, VOCAB);
        byte[] foreign = bytes.clone();
        ByteBuffer.wrap(foreign).order(ByteOrder.LITTLE_ENDIAN).putInt(12 + 4 * 8, 0x12345678);
        assertRefused("no keys and values this server wrote", write("foreign.bin", foreign), KvCache.Precision.F16,
                VOCAB);
    }

    private Path write(String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }

    private static void assertRefused(String why, Path file, KvCache.Precision precision, int vocab) {
        CachedTokens cached = tokens(7, 7);
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () ->
                SlotFile.restore(filled(precision, 1, 7), cached, 0, file, vocab));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertEquals(0, cached.length(), "a failed restore leaves the slot empty");
    }

    private static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
