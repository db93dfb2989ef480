package dev.laneway.engine.sample;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The draws of llama.cpp's random source. Expected values from libstdc++ (g++ 12): {@code std::mt19937} default
 * seeded, its 10000th output (the value the C++ standard names); and
 * {@code std::uniform_real_distribution<double>(0, 1)} over {@code std::mt19937(42)} and {@code std::mt19937(0xffffffff)}.
 */
class MersenneTwisterTest {

    @Test
    void theTenThousandthOutputOfTheDefaultSeedIsTheStandardsValue() {
        MersenneTwister mt = new MersenneTwister(5489);
        for (int i = 0; i < 9999; i++) {
            mt.nextUnsigned();
        }
        assertEquals(4123659995L, mt.nextUnsigned());
    }

    @Test
    void uniformDoublesAreTheOnesLibstdcxxDraws() {
        MersenneTwister mt = new MersenneTwister(42);
        assertEquals(0.79654298428784598, mt.nextDouble());
        assertEquals(0.18343478789336848, mt.nextDouble());
        assertEquals(0.77969099761266125, mt.nextDouble());
        assertEquals(0.11160666544400902, new MersenneTwister(0xffffffffL).nextDouble());
    }
}
