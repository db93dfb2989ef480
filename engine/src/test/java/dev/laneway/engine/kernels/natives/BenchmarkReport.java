package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Matrix.Layout;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the kernel benchmarks and prints the median over measurement iterations as GB/s (weights read per second, and
 * the streaming read ceiling), GFLOP/s (batched products) or µs per call. Arguments: an optional regular expression
 * choosing benchmarks. Run from the repository root:
 * <pre>
 * ./mvnw -B -q -pl engine -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
 * java -cp engine/target/test-classes:engine/target/classes:$(cat engine/target/bench.classpath) \
 *     dev.laneway.engine.kernels.natives.BenchmarkReport [regex]
 * </pre>
 */
public final class BenchmarkReport {
    private BenchmarkReport() {
    }

    public static void main(String[] args) throws Exception {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(args.length > 0 ? args[0] : "dev.laneway.engine.kernels.natives.*Benchmark")
                .forks(1)
                .warmupIterations(3)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(7)
                .measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("-Xmx4g");
        Collection<RunResult> results = new Runner(options.build()).run();
        System.out.println();
        System.out.println("median of 7 iterations (µs per call) and what it means; then the best iteration:");
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark().replaceAll(".*\\.(\\w+\\.\\w+)$", "$1");
            Map<String, String> params = new java.util.TreeMap<>();
            for (String key : r.getParams().getParamsKeys()) {
                params.put(key, r.getParams().getParam(key));
            }
            double[] scores = r.getBenchmarkResults().stream()
                    .flatMap(b -> b.getIterationResults().stream())
                    .mapToDouble(i -> i.getPrimaryResult().getScore()).sorted().toArray();
            double micros = scores[scores.length / 2];
            System.out.printf("%-32s %-48s %10.1f µs  %-16s best %.1f µs  %s%n", name, params, micros,
                    meaning(name, params, micros), scores[0], meaning(name, params, scores[0]));
        }
    }

    private static String meaning(String name, Map<String, String> p, double micros) {
        if (name.startsWith("StreamReadBenchmark")) {
            return String.format("%.1f GB/s", MatvecBenchmark.WORKING_SET / micros / 1e3);
        }
        if (!p.containsKey("shape")) {
            return "";
        }
        int[] shape = Arrays.stream(p.get("shape").split("x")).mapToInt(Integer::parseInt).toArray();
        if (name.startsWith("MatvecBenchmark")) {
            long bytes = Layout.valueOf(p.get("layout")).bytes(shape[0], shape[1]);
            return String.format("%.1f GB/s", bytes / micros / 1e3);
        }
        double flops = 2.0 * shape[0] * shape[1] * Integer.parseInt(p.get("batch"));
        return String.format("%.1f GFLOP/s", flops / micros / 1e3);
    }
}
