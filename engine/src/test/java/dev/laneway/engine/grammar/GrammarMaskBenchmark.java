package dev.laneway.engine.grammar;

import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.OutputGrammar;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The cost of constrained decoding per token, without a model: a vocabulary GGUF's tokens, a JSON Schema, and
 * generations that draw each token uniformly among those the grammar allows, so that every token needs its mask (a
 * random-weight model's worst case). Prints, per generation, the mean and 99th-percentile microseconds of the mask
 * and the move per token; the first generation builds the automaton and its masks, later ones find them kept.
 * Arguments: a vocabulary GGUF, a JSON Schema file, and optionally the generations (default 20) and tokens per
 * generation (default 256). Run from the repository root:
 * <pre>
 * ./mvnw -B -q -pl engine -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
 * java -cp engine/target/test-classes:engine/target/classes:$(cat engine/target/bench.classpath) \
 *     dev.laneway.engine.grammar.GrammarMaskBenchmark VOCAB.gguf SCHEMA.json [GENERATIONS] [TOKENS]
 * </pre>
 */
public final class GrammarMaskBenchmark {
    private GrammarMaskBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        TextTokenizer tokenizer = TokenizerLoader.load(Path.of(args[0]));
        String schema = Files.readString(Path.of(args[1]));
        int generations = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int length = args.length > 3 ? Integer.parseInt(args[3]) : 256;
        int vocab = tokenizer.vocabSize();
        int eos = tokenizer.eosId().orElse(0);
        long built = System.nanoTime();
        Grammars grammars = Grammars.of(tokenizer, new int[] {eos}, vocab);
        OutputGrammar grammar = OutputGrammar.jsonSchema(schema, "schema");
        grammars.check(grammar);
        System.out.printf("vocabulary %d tokens; trie and automaton start %.1f ms%n", vocab,
                (System.nanoTime() - built) / 1e6);
        System.out.println("generation  tokens  mean µs/token  p99 µs/token  max µs");
        float[] logits = new float[vocab];
        SplittableRandom random = new SplittableRandom(1);
        for (int g = 0; g < generations; g++) {
            GrammarCursor cursor = grammars.start(grammar);
            long[] nanos = new long[length];
            int n = 0;
            while (n < length && !cursor.complete()) {
                Arrays.fill(logits, 0f);
                long t0 = System.nanoTime();
                boolean any = cursor.restrict(logits, vocab);
                long masked = System.nanoTime() - t0;
                if (!any) {
                    break;
                }
                int token = uniformAllowed(logits, random);
                if (token == eos) {
                    break;
                }
                long t1 = System.nanoTime();
                cursor.accept(token);
                nanos[n++] = masked + System.nanoTime() - t1;
            }
            long[] sorted = Arrays.copyOf(nanos, n);
            Arrays.sort(sorted);
            double mean = Arrays.stream(sorted).average().orElse(0) / 1e3;
            System.out.printf("%10d  %6d  %13.1f  %12.1f  %6.0f%n", g + 1, n, mean,
                    n == 0 ? 0 : sorted[Math.min(n - 1, (int) (n * 0.99))] / 1e3, n == 0 ? 0 : sorted[n - 1] / 1e3);
        }
    }

    private static int uniformAllowed(float[] logits, SplittableRandom random) {
        int allowed = 0;
        for (float l : logits) {
            if (l == 0f) {
                allowed++;
            }
        }
        int pick = random.nextInt(allowed);
        for (int t = 0; t < logits.length; t++) {
            if (logits[t] == 0f && pick-- == 0) {
                return t;
            }
        }
        throw new IllegalStateException();
    }
}
