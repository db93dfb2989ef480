package dev.laneway.runtime.cli;

import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.ServedModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * {@code laneway bench}: prompt-processing and generation speed, like llama-bench. Each run processes a prompt of
 * {@code -p} random tokens, then generates {@code -n} tokens greedily past any end-of-text; after one warm-up run,
 * {@code -r} runs are timed and their medians reported. Generation thus runs at KV depth {@code -p}, which
 * llama-bench measures with {@code -p 0 -n N -d P}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measure prompt-processing and generation tok/s, like llama-bench.")
final class BenchCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Option(names = {"-p", "--n-prompt"}, paramLabel = "P", defaultValue = "128",
            description = "Prompt tokens per run (default: ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = {"-n", "--n-gen"}, paramLabel = "N", defaultValue = "64",
            description = "Generated tokens per run (default: ${DEFAULT-VALUE}).")
    int genTokens;

    @Option(names = {"-r", "--repetitions"}, paramLabel = "R", defaultValue = "5",
            description = "Timed runs after one warm-up (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Spec
    CommandSpec spec;

    /** The device the runs go to: the router's choice, or the model's device. */
    private String device;

    @Override
    public Integer call() {
        if (promptTokens < 1 || genTokens < 1 || runs < 1) {
            throw new UsageException("-p, -n and -r must be at least 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (ServedModel m = OpenedModel.open(model, spec.commandLine().getErr())) {
            if (promptTokens + genTokens > m.info().contextLength()) {
                throw new UsageException("-p " + promptTokens + " plus -n " + genTokens + " exceed the context of "
                        + m.info().contextLength() + " tokens");
            }
            int[] prompt = randomPrompt(m.info().vocabSize(), promptTokens);
            // With --laya the router decides once, by the prompt's text, and every run goes where it said.
            Optional<RouteDecision> route = m.route(RoutingInput.prompt(m.detokenize(prompt)));
            device = route.map(RouteDecision::device).orElse(m.info().device());
            route.ifPresent(d -> spec.commandLine().getErr().println(RunCommand.routeLine(m, d)));
            run(m, route, prompt);
            List<Double> pp = new ArrayList<>();
            List<Double> tg = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                GenerationResult r = run(m, route, prompt);
                pp.add(r.promptTokens() * 1e9 / r.promptNanos());
                tg.add(r.generatedTokens() * 1e9 / r.generationNanos());
            }
            if (json) {
                out.println(json(m, pp, tg));
            } else {
                table(out, m, pp, tg);
            }
            out.flush();
        }
        return ExitCodes.OK;
    }

    private GenerationResult run(ServedModel m, Optional<RouteDecision> route, int[] prompt) {
        GenerationRequest request = new GenerationRequest(prompt, genTokens, Sampling.GREEDY,
                GenerationRequest.NO_LOGPROBS, true);
        return route.isPresent() ? m.generate(request, route.get(), t -> true) : m.generate(request, t -> true);
    }

    /** Token ids drawn past the first few (special tokens), the same for every run. */
    private static int[] randomPrompt(int vocab, int n) {
        SplittableRandom random = new SplittableRandom(42);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = Math.min(vocab - 1, 3 + random.nextInt(Math.max(1, vocab - 3)));
        }
        return ids;
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private void table(PrintWriter out, ServedModel m, List<Double> pp, List<Double> tg) {
        String name = m.id();
        out.println("| model | route | device | test | t/s (median) | min | max |");
        out.println("| --- | --- | --- | ---: | ---: | ---: | ---: |");
        row(out, name, m, "pp" + promptTokens, pp);
        row(out, name, m, "tg" + genTokens + " @ d" + promptTokens, tg);
    }

    private void row(PrintWriter out, String name, ServedModel m, String test, List<Double> v) {
        out.printf(Locale.ROOT, "| %s | %s | %s | %s | %.2f | %.2f | %.2f |%n", name, m.info().route(),
                device, test, median(v), v.stream().mapToDouble(d -> d).min().orElse(0),
                v.stream().mapToDouble(d -> d).max().orElse(0));
    }

    private String json(ServedModel m, List<Double> pp, List<Double> tg) {
        return String.format(Locale.ROOT, "{\"model\":\"%s\",\"route\":\"%s\",\"device\":\"%s\",\"n_prompt\":%d,"
                        + "\"n_gen\":%d,\"repetitions\":%d,\"pp_tok_s\":%.3f,\"tg_tok_s\":%.3f,\"pp_runs\":%s,\"tg_runs\":%s}",
                m.id().replace("\"", "'"), m.info().route(), device, promptTokens, genTokens, runs,
                median(pp), median(tg), array(pp), array(tg));
    }

    private static String array(List<Double> v) {
        return Arrays.toString(v.stream().map(d -> String.format(Locale.ROOT, "%.3f", d)).toArray());
    }
}
