package dev.laneway.engine.kernels;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvCacheTest {
    private static final int KV_DIM = 8;

    @Test
    void anOnDemandCacheHoldsNothingUntilPositionsAreReserved() {
        KvCache cache = KvCache.onDemand(2, 4096, KV_DIM, KvCache.Precision.F16);
        assertEquals(0, cache.room());
        assertEquals(0, cache.layer(1).keys16().length);
        cache.reserve(9);
        assertEquals(KvCache.FIRST_ROOM, cache.room());
        assertEquals(KvCache.FIRST_ROOM * KV_DIM, cache.layer(1).keys16().length);
        assertEquals(KvCache.FIRST_ROOM * KV_DIM, cache.layer(0).values16().length);
    }

    @Test
    void growingKeepsWhatWasStoredInEveryLayer() {
        for (KvCache.Precision precision : KvCache.Precision.values()) {
            KvCache cache = KvCache.onDemand(3, 4096, KV_DIM, precision);
            cache.reserve(200);
            float[] k = rows(200, 1);
            float[] v = rows(200, -1);
            for (int l = 0; l < 3; l++) {
                cache.layer(l).store(k, v, 200, 0);
            }
            cache.reserve(257);  // doubles
            assertEquals(2 * KvCache.FIRST_ROOM, cache.room(), precision.name());
            cache.reserve(3000);  // more than double: exactly what is asked
            assertEquals(3000, cache.room(), precision.name());
            for (int l = 0; l < 3; l++) {
                assertArrayEquals(k, keys(cache.layer(l), 200), precision + " keys, layer " + l);
                assertArrayEquals(v, values(cache.layer(l), 200), precision + " values, layer " + l);
            }
        }
    }

    /** Past three quarters of the room the next arrays are made ahead; growing into them keeps every slot's rows. */
    @Test
    void aGrowthPreparedAheadKeepsEverySlot() {
        KvCache cache = KvCache.onDemand(2, 4096, KV_DIM, KvCache.Precision.F16, 3);
        cache.reserve(KvCache.FIRST_ROOM - 10);  // past three quarters: the arrays of 512 positions are being made
        float[] k = rows(KvCache.FIRST_ROOM - 10, 2);
        float[] v = rows(KvCache.FIRST_ROOM - 10, -2);
        for (int slot = 0; slot < 3; slot++) {
            cache.layer(1).store(k, v, 0, KvCache.FIRST_ROOM - 10, slot, 0);
        }
        cache.reserve(KvCache.FIRST_ROOM + 1);
        assertEquals(2 * KvCache.FIRST_ROOM, cache.room());
        assertEquals(3 * 2 * KvCache.FIRST_ROOM * KV_DIM, cache.layer(1).keys16().length);
        KvCache.Layer layer = cache.layer(1);
        for (int slot = 0; slot < 3; slot++) {
            for (int i = 0; i < k.length; i++) {
                assertEquals(k[i], Floats.f16ToFloat(layer.keys16()[layer.base(slot) + i]), "slot " + slot);
                assertEquals(v[i], Floats.f16ToFloat(layer.values16()[layer.base(slot) + i]), "slot " + slot);
            }
        }
    }

    @Test
    void roomNeverExceedsTheContext() {
        KvCache cache = KvCache.onDemand(1, 300, KV_DIM, KvCache.Precision.F32);
        cache.reserve(1);
        cache.reserve(257);  // would double to 512
        assertEquals(300, cache.room());
        assertEquals(300 * KV_DIM, cache.layer(0).keys().length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cache.reserve(301));
        assertTrue(e.getMessage().contains("exceed the context of 300"), e.getMessage());
    }

    @Test
    void aFullCacheHasRoomForTheWholeContextAtOnce() {
        KvCache cache = new KvCache(2, 100, KV_DIM, KvCache.Precision.F16);
        assertEquals(100, cache.room());
        assertEquals(100 * KV_DIM, cache.layer(1).values16().length);
        assertEquals(2L * 2 * 100 * KV_DIM * 2, cache.bytesFor(100));
    }

    /** Values exact in half precision: small integers. */
    private static float[] rows(int positions, int sign) {
        float[] x = new float[positions * KV_DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = sign * (i % 512);
        }
        return x;
    }

    private static float[] keys(KvCache.Layer layer, int positions) {
        return layer.f16() ? widen(layer.keys16(), positions) : java.util.Arrays.copyOf(layer.keys(), positions * KV_DIM);
    }

    private static float[] values(KvCache.Layer layer, int positions) {
        return layer.f16() ? widen(layer.values16(), positions)
                : java.util.Arrays.copyOf(layer.values(), positions * KV_DIM);
    }

    private static float[] widen(short[] bits, int positions) {
        float[] x = new float[positions * KV_DIM];
        for (int i = 0; i < x.length; i++) {
            x[i] = Floats.f16ToFloat(bits[i]);
        }
        return x;
    }

    @Test
    void cachesThatCouldNotGrowToTheWholeContextAreRefusedUpFront() {
        long oneStream = KvCache.bytes(16, 4096, 512, KvCache.Precision.F16);
        assertEquals(128L << 20, oneStream);  // 16 layers, keys and values, 4096 positions of 512 halves
        KvCache.requireHeap(2, 16, 4096, 512, KvCache.Precision.F16, 2 * oneStream);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KvCache.requireHeap(2, 16, 4096, 512, KvCache.Precision.F32, 3 * oneStream));
        assertTrue(e.getMessage().contains("2 stream(s) at the full context of 4096 positions need 512 MiB, more than"
                + " the 384 MiB of Java heap left"), e.getMessage());
    }
}
