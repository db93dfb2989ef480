package dev.laneway.engine.sample;

/**
 * The 32-bit Mersenne Twister (MT19937) and the C++ standard library's uniform double drawn from it, the random
 * source of llama.cpp's samplers: with the same seed, a draw here is the draw llama.cpp makes.
 */
final class MersenneTwister {
    private static final int N = 624;
    private static final int M = 397;
    private final int[] state = new int[N];
    private int next = N;

    /** Seeded as {@code std::mt19937(seed)}: the seed's low 32 bits. */
    MersenneTwister(long seed) {
        state[0] = (int) seed;
        for (int i = 1; i < N; i++) {
            state[i] = 1812433253 * (state[i - 1] ^ (state[i - 1] >>> 30)) + i;
        }
    }

    /** The next 32-bit output, as an unsigned value. */
    long nextUnsigned() {
        if (next == N) {
            twist();
        }
        int y = state[next++];
        y ^= y >>> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >>> 18;
        return y & 0xffffffffL;
    }

    /**
     * {@code std::uniform_real_distribution<double>(0, 1)} as libstdc++ draws it: two outputs, the second the high
     * half, summed in double precision and scaled by 2^-64; a result that rounds to 1 is the double below it.
     */
    double nextDouble() {
        double sum = nextUnsigned();
        sum += nextUnsigned() * 4294967296.0;
        double u = sum / 18446744073709551616.0;
        return u >= 1.0 ? Math.nextDown(1.0) : u;
    }

    private void twist() {
        for (int i = 0; i < N; i++) {
            int y = (state[i] & 0x80000000) | (state[(i + 1) % N] & 0x7fffffff);
            int v = state[(i + M) % N] ^ (y >>> 1);
            state[i] = (y & 1) != 0 ? v ^ 0x9908b0df : v;
        }
        next = 0;
    }
}
