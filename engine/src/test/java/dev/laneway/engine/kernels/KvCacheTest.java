package dev.laneway.engine.kernels;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvCacheTest {
    private static final int KV_DIM = 32;  // a whole block of an eight-bit cache

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
            if (precision == KvCache.Precision.Q8) {  // what an eight-bit cache holds is k and v rounded
                k = keys(cache.layer(0), 200);
                v = values(cache.layer(0), 200);
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
        float[] x = new float[positions * layer.kvDim()];
        layer.readKeys(0, x);
        return x;
    }

    private static float[] values(KvCache.Layer layer, int positions) {
        return switch (layer.precision()) {
            case F16 -> widen(layer.values16(), positions);
            case F32 -> java.util.Arrays.copyOf(layer.values(), positions * layer.kvDim());
            case Q8 -> {
                float[] x = new float[positions * layer.kvDim()];
                layer.readValues(0, x);
                yield x;
            }
        };
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

    /**
     * An eight-bit cache keeps llama.cpp's q8_0 blocks: 34 bytes per 32 elements, each element within half a step
     * (the block's largest magnitude over 127) of what was stored (heads of 32 are not rotated); heads of other sizes
     * are refused by name.
     */
    @Test
    void anEightBitCacheKeepsQ8BlocksWithinHalfAStep() {
        KvCache cache = new KvCache(2, 10, 64, 32, KvCache.Precision.Q8);
        assertEquals(0, cache.layer(0).keyRotation());
        assertEquals(10 * 2 * 34, cache.layer(0).keys8().length);
        assertEquals(2L * 2 * 10 * 2 * 34, cache.bytesFor(10));
        java.util.Random random = new java.util.Random(3);
        float[] k = new float[10 * 64];
        float[] v = new float[10 * 64];
        for (int i = 0; i < k.length; i++) {
            k[i] = (float) random.nextGaussian() * (1 + i % 7);
            v[i] = (float) random.nextGaussian();
        }
        KvCache.Layer layer = cache.layer(1);
        layer.store(k, v, 10, 0);
        float[] kk = keys(layer, 10);
        float[] vv = values(layer, 10);
        for (int b = 0; b < k.length; b += 32) {
            float kMax = 0;
            float vMax = 0;
            for (int i = b; i < b + 32; i++) {
                kMax = Math.max(kMax, Math.abs(k[i]));
                vMax = Math.max(vMax, Math.abs(v[i]));
            }
            for (int i = b; i < b + 32; i++) {
                assertEquals(k[i], kk[i], kMax / 127 * 0.501 + kMax * 1e-3, "key " + i);
                assertEquals(v[i], vv[i], vMax / 127 * 0.501 + vMax * 1e-3, "value " + i);
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KvCache.onDemand(1, 10, 48, KvCache.Precision.Q8));
        assertTrue(e.getMessage().contains("heads of whole 32-element blocks, got 48 in rows of 48"), e.getMessage());
    }

    /**
     * Heads of 64 and more are rotated before they are kept ({@link Hadamard}), so an element's error is no longer
     * its own block's, but a row's error is as large as the rotated row's rounding: at most half a step per element.
     */
    @Test
    void aRotatedEightBitCacheKeepsEachRowWithinItsRounding() {
        KvCache cache = new KvCache(1, 4, 256, 128, KvCache.Precision.Q8);
        KvCache.Layer layer = cache.layer(0);
        assertEquals(128, layer.keyRotation());
        assertEquals(64, layer.valueRotation());
        java.util.Random random = new java.util.Random(5);
        float[] k = new float[4 * 256];
        for (int i = 0; i < k.length; i++) {
            k[i] = (float) random.nextGaussian() * (i % 37 == 0 ? 20 : 1);  // a few outliers, as real keys have
        }
        layer.store(k, k, 4, 0);
        for (boolean keys : new boolean[] {true, false}) {
            float[] got = new float[k.length];
            if (keys) {
                layer.readKeys(0, got);
            } else {
                layer.readValues(0, got);
            }
            float[] rotated = k.clone();
            Hadamard.rotate(rotated, 0, rotated.length, keys ? 128 : 64);
            for (int row = 0; row < 4; row++) {
                double bound = 0;
                double error = 0;
                for (int b = row * 256; b < (row + 1) * 256; b += 32) {
                    float max = 0;
                    for (int i = b; i < b + 32; i++) {
                        max = Math.max(max, Math.abs(rotated[i]));
                        error += (got[i] - k[i]) * (got[i] - k[i]);
                    }
                    bound += 32 * Math.pow(max / 127 * 0.501, 2);
                }
                assertTrue(error <= bound, (keys ? "keys" : "values") + " row " + row + ": " + error + " > " + bound);
            }
        }
    }

    /**
     * Dropping positions of an eight-bit cache moves the values' blocks as they are and turns the keys back as the
     * single-precision cache does, within the blocks' rounding.
     */
    @Test
    void anEightBitShiftTurnsKeysAsTheSinglePrecisionOne() {
        Rope rope = Rope.of(Rope.Style.HALVES, 64, 64, 40, 10000);
        KvCache q8 = new KvCache(1, 40, 128, KvCache.Precision.Q8);
        KvCache f32 = new KvCache(1, 40, 128, KvCache.Precision.F32);
        java.util.Random random = new java.util.Random(4);
        float[] k = new float[30 * 128];
        float[] v = new float[30 * 128];
        for (int i = 0; i < k.length; i++) {
            k[i] = (float) random.nextGaussian();
            v[i] = (float) random.nextGaussian();
        }
        q8.layer(0).store(k, v, 30, 0);
        f32.layer(0).store(keys(q8.layer(0), 30), values(q8.layer(0), 30), 30, 0);  // the same numbers
        q8.shift(0, 4, 10, 30, l -> rope);
        f32.shift(0, 4, 10, 30, l -> rope);
        float[] want = keys(f32.layer(0), 20);
        float[] got = keys(q8.layer(0), 20);
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got[i], 0.03, "key " + i);
        }
        assertArrayEquals(values(f32.layer(0), 20), values(q8.layer(0), 20));
    }
}
