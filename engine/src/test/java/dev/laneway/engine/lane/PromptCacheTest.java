package dev.laneway.engine.lane;

import dev.laneway.engine.generate.CachedTokens;
import dev.laneway.engine.kernels.KvCache;
import dev.laneway.engine.testing.Stories260k;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.Sampling;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host-memory prompt cache ({@code --cache-ram}): on one stream, a conversation overwritten by another comes back
 * from memory when its prompt returns, computing only its last token, and generates what it generated the first time;
 * without the cache it is computed again; a prompt under another cache salt takes nothing from it; the budget bounds
 * what is kept.
 */
class PromptCacheTest {
    private static int[] story;
    private static final int[] OTHER = IntStream.concat(IntStream.of(Stories260k.BOS),
            IntStream.range(300, 340)).toArray();

    /** A story the model tells itself, as a long prompt. */
    @BeforeAll
    static void tellStory() {
        List<Integer> ids = new ArrayList<>();
        try (LanePool pool = pool(0)) {
            pool.generate(new GenerationRequest(new int[]{Stories260k.BOS}, 80, Sampling.GREEDY), t -> ids.add(t.id()));
        }
        story = IntStream.concat(IntStream.of(Stories260k.BOS), ids.stream().mapToInt(Integer::intValue)).toArray();
    }

    private static LanePool pool(long cacheRam) {
        return LanePool.create(1, new HostDevice(), Stories260k.forward(), 8, KvCache.Precision.F16, cacheRam, 0,
                new int[]{Stories260k.EOS}, dev.laneway.engine.grammar.Grammars.NONE, LaneTimeouts.DEFAULT,
                ContextGate.open(), Clock.SYSTEM);
    }

    private record Run(GenerationResult result, List<GeneratedToken> tokens) {
    }

    private static Run run(LanePool pool, int[] prompt, String salt) {
        List<GeneratedToken> tokens = new ArrayList<>();
        GenerationResult r = pool.generate(new GenerationRequest(prompt, 24, Sampling.GREEDY, 0, false,
                Optional.empty(), true, GenerationRequest.ANY_SLOT, false, salt), tokens::add);
        return new Run(r, tokens);
    }

    @Test
    void aConversationOverwrittenByAnotherComesBackFromMemory() {
        try (LanePool pool = pool(64L << 20)) {
            Run first = run(pool, story, "");
            assertEquals(0, first.result().cachedTokens());
            run(pool, OTHER, "");
            Run again = run(pool, story, "");
            assertEquals(story.length - 1, again.result().cachedTokens(), "all but the last token came back");
            assertEquals(ids(first), ids(again));
            for (int i = 0; i < first.tokens().size(); i++) {
                assertEquals(first.tokens().get(i).logprob(), again.tokens().get(i).logprob(), 1e-6);
            }
            assertEquals(story.length - 1, pool.promptCache().restoredTokens());
            // the other conversation went to memory in its turn, and comes back too
            assertEquals(OTHER.length - 1, run(pool, OTHER, "").result().cachedTokens());
        }
    }

    @Test
    void withoutTheCacheThePromptIsComputedAgain() {
        try (LanePool pool = pool(0)) {
            Run first = run(pool, story, "");
            run(pool, OTHER, "");
            Run again = run(pool, story, "");
            assertEquals(1, again.result().cachedTokens(), "only the BOS both prompts begin with");
            assertEquals(ids(first), ids(again));
            assertEquals(0, pool.promptCache().entries());
        }
    }

    @Test
    void aPromptUnderAnotherSaltTakesNothing() {
        try (LanePool pool = pool(64L << 20)) {
            run(pool, story, "alice");
            run(pool, OTHER, "alice");
            assertEquals(0, run(pool, story, "bob").result().cachedTokens());
            assertEquals(story.length - 1, run(pool, story, "alice").result().cachedTokens());
        }
    }

    /** A budget smaller than one conversation's keys and values keeps none. */
    @Test
    void theBudgetBoundsWhatIsKept() {
        try (LanePool pool = pool(1024)) {
            run(pool, story, "");
            run(pool, OTHER, "");
            assertEquals(1, run(pool, story, "").result().cachedTokens(), "only the BOS both prompts begin with");
            assertEquals(0, pool.promptCache().bytes());
        }
    }

    private static List<Integer> ids(Run run) {
        return run.tokens().stream().map(GeneratedToken::id).toList();
    }

    /**
     * Every precision of cache is kept and restored as stored: a slot's positions, eight-bit blocks included, come
     * back into another slot byte for byte, and the kept entry counts the bytes they take.
     */
    @Test
    void aSlotOfEveryPrecisionComesBackAsItWasKept() {
        for (KvCache.Precision precision : KvCache.Precision.values()) {
            KvCache kv = KvCache.onDemand(2, 64, 64, precision, 2);
            kv.reserve(20);
            java.util.Random random = new java.util.Random(9);
            for (int l = 0; l < 2; l++) {
                float[] k = new float[20 * 64];
                float[] v = new float[20 * 64];
                for (int i = 0; i < k.length; i++) {
                    k[i] = (float) random.nextGaussian();
                    v[i] = (float) random.nextGaussian();
                }
                kv.layer(l).store(k, v, 0, 20, 0, 0);
            }
            CachedTokens held = new CachedTokens();
            held.append(IntStream.range(1, 21).toArray(), 0, 20);
            PromptCache cache = new PromptCache(1 << 20);
            cache.keep(kv, held, 0, "");
            assertEquals(2 * 2 * precision.bytes(20 * 64), cache.stats().bytes(), precision.name());
            CachedTokens other = new CachedTokens();
            int[] prompt = IntStream.range(1, 30).toArray();
            assertEquals(20, cache.restore(kv, other, 1, "", prompt, 0), precision.name());
            for (int l = 0; l < 2; l++) {
                KvCache.Layer layer = kv.layer(l);
                int n = layer.index(20 * 64);
                for (Object array : new Object[] {layer.keyArray(), layer.valueArray()}) {
                    for (int i = 0; i < n; i++) {
                        assertEquals(java.lang.reflect.Array.get(array, layer.index(layer.base(0)) + i),
                                java.lang.reflect.Array.get(array, layer.index(layer.base(1)) + i),
                                precision + " layer " + l + " entry " + i);
                    }
                }
            }
        }
    }
}
