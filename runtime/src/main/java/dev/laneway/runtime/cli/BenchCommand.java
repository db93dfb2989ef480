package dev.laneway.runtime.cli;

import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.OutputGrammar;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.ServedModel;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * {@code laneway bench}: prompt-processing and generation speed, like llama-bench. Each run processes a prompt of
 * {@code -p} random tokens, then generates {@code -n} tokens greedily past any end-of-text; after warm-up runs (until
 * the JIT compiler is quiet, see {@link #warmUp}), {@code -r} runs are timed and their medians reported. Generation
 * thus runs at KV depth {@code -p}, which llama-bench measures with {@code -p 0 -n N -d P}. The context is
 * {@code -p + -n} tokens unless {@code --opt ctx} says otherwise, as llama-bench sizes its own.
 *
 * <p>With {@code --vs}, further models (or the same model with other options, e.g. another route) are opened in the
 * same process and the runs alternate between all of them, the order rotating every round: on a noisy machine the
 * runs compared are then close in time.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measure prompt-processing and generation tok/s, like llama-bench.")
final class BenchCommand implements Callable<Integer> {
    private static final long WARM_UP_LIMIT_NANOS = 20_000_000_000L;
    private static final int WARM_UP_MAX_ROUNDS = 30;
    /** The longest wait for the work a model does in the background after loading. */
    private static final Duration BACKGROUND_LIMIT = Duration.ofMinutes(5);

    @Mixin
    ModelOptions model;

    @Option(names = {"-p", "--n-prompt"}, paramLabel = "P", defaultValue = "128",
            description = "Prompt tokens per run (default: ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = {"-n", "--n-gen"}, paramLabel = "N", defaultValue = "64",
            description = "Generated tokens per run (default: ${DEFAULT-VALUE}).")
    int genTokens;

    @Option(names = {"-r", "--repetitions"}, paramLabel = "R", defaultValue = "5",
            description = "Timed runs after the warm-up (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--json", description = "Print one JSON object per model instead of a table.")
    boolean json;

    @Option(names = "--json-schema", paramLabel = "FILE",
            description = "Hold the generated text to this JSON Schema (constrained decoding), as a request's"
                    + " response_format would; a run ends early where the schema's value is whole.")
    Path jsonSchema;

    @Option(names = "--vs", paramLabel = "\"MODEL [OPTIONS]\"",
            description = "Also measure this model opened with these options, e.g. \"DIR --opt dx=off\", in the same"
                    + " process, its runs alternating with the others'; repeatable.")
    List<String> versus = new ArrayList<>();

    @Spec
    CommandSpec spec;

    /** The schema of {@code --json-schema}, when given. */
    private Optional<OutputGrammar> grammar() {
        if (jsonSchema == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(OutputGrammar.jsonSchema(java.nio.file.Files.readString(jsonSchema), "--json-schema"));
        } catch (java.io.IOException e) {
            throw new UsageException("--json-schema " + jsonSchema + ": " + e.getMessage());
        }
    }

    /** The options of a {@code --vs} model. */
    @Command(name = "--vs")
    static final class Versus {
        @Mixin
        ModelOptions model;
    }

    /** A model being measured: its runs go to the router's choice, or to the model's device. */
    private final class Measured {
        final ServedModel model;
        final Optional<RouteDecision> route;
        final String device;
        final int[] prompt;
        private int runs;
        final List<Double> pp = new ArrayList<>();
        final List<Double> tg = new ArrayList<>();

        Measured(ServedModel model) {
            this.model = model;
            if (promptTokens + genTokens > model.info().contextLength()) {
                throw new UsageException("-p " + promptTokens + " plus -n " + genTokens + " exceed the context of "
                        + model.info().contextLength() + " tokens (" + model.id() + ")");
            }
            this.prompt = randomPrompt(model.info().vocabSize(), promptTokens, 0);
            grammar().ifPresent(g -> {
                try {
                    model.checkGrammar(g);
                } catch (dev.laneway.spi.InvalidRequestException e) {
                    throw new UsageException(e.getMessage());
                }
            });
            // With --laya the router decides once, by the prompt's text, and every run goes where it said.
            this.route = model.route(RoutingInput.prompt(model.detokenize(prompt)));
            this.device = route.map(RouteDecision::device).orElse(model.info().device());
            route.ifPresent(d -> spec.commandLine().getErr().println(RunCommand.routeLine(model, d)));
        }

        /** One run, on a prompt of its own: a prompt the KV cache still held would not be processed again. */
        GenerationResult run() {
            int[] p = runs++ == 0 ? prompt : randomPrompt(model.info().vocabSize(), promptTokens, runs);
            GenerationRequest request = new GenerationRequest(p, genTokens, Sampling.GREEDY,
                    GenerationRequest.NO_LOGPROBS, true, grammar());
            GenerationResult r = route.isPresent() ? model.generate(request, route.get(), t -> true)
                    : model.generate(request, t -> true);
            if (r.cachedTokens() > 0) {
                throw new IllegalStateException("a bench run reused " + r.cachedTokens() + " cached prompt tokens");
            }
            return r;
        }

        void measure() {
            GenerationResult r = run();
            pp.add(r.promptTokens() * 1e9 / r.promptNanos());
            tg.add(r.generatedTokens() * 1e9 / r.generationNanos());
        }
    }

    /**
     * Waits until each model's background work after loading is done: the native kernels make copies of streamed
     * weights, which products read faster, on idle cores, so that a server answers at once. Runs started before they
     * are made measure the tiles they replace, and keep them from being made.
     */
    private void awaitBackgroundWork(List<Measured> measured) {
        long start = System.nanoTime();
        boolean done = measured.stream().allMatch(m -> m.model.awaitBackgroundWork(BACKGROUND_LIMIT));
        spec.commandLine().getErr().printf(Locale.ROOT, "background work: %s after %.1f s%n",
                done ? "done" : "still running", (System.nanoTime() - start) / 1e9);
    }

    /**
     * Runs every model until a round of runs finishes with the JIT compiler quiet (compiling for less than a hundredth
     * of the round's time), for at most {@link #WARM_UP_MAX_ROUNDS} rounds and {@link #WARM_UP_LIMIT_NANOS}. With two
     * cores, a compiler thread still at work takes one from the kernels' pool: a single warm-up run left the first
     * timed runs of a small model up to half as fast as the later ones.
     */
    private void warmUp(List<Measured> measured) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean watched = jit != null && jit.isCompilationTimeMonitoringSupported();
        long deadline = System.nanoTime() + WARM_UP_LIMIT_NANOS;
        int rounds = 0;
        for (;;) {
            long compiledMillis = watched ? jit.getTotalCompilationTime() : 0;
            long start = System.nanoTime();
            measured.forEach(Measured::run);
            long took = System.nanoTime() - start;
            rounds++;
            boolean quiet = !watched || (jit.getTotalCompilationTime() - compiledMillis) * 1_000_000L * 100 < took;
            if (quiet || rounds == WARM_UP_MAX_ROUNDS || System.nanoTime() > deadline) {
                break;
            }
        }
        spec.commandLine().getErr().println("warm-up: " + rounds + (rounds == 1 ? " round" : " rounds"));
    }

    @Override
    public Integer call() {
        if (promptTokens < 1 || genTokens < 1 || runs < 1) {
            throw new UsageException("-p, -n and -r must be at least 1");
        }
        List<ModelOptions> models = new ArrayList<>(List.of(model));
        for (String v : versus) {
            models.add(versusOptions(v));
        }
        PrintWriter out = spec.commandLine().getOut();
        List<Measured> measured = new ArrayList<>();
        try {
            for (ModelOptions options : models) {
                ServedModel opened = OpenedModel.open(withRunContext(options), spec.commandLine().getErr());
                try {
                    measured.add(new Measured(opened));
                } catch (RuntimeException e) {
                    opened.close();
                    throw e;
                }
            }
            awaitBackgroundWork(measured);
            warmUp(measured);
            for (int i = 0; i < runs; i++) {
                for (int j = 0; j < measured.size(); j++) {
                    measured.get((i + j) % measured.size()).measure();
                }
            }
            if (json) {
                measured.forEach(m -> out.println(json(m)));
            } else {
                out.println("| model | route | device | test | t/s (median) | min | max |");
                out.println("| --- | --- | --- | ---: | ---: | ---: | ---: |");
                measured.forEach(m -> table(out, m));
            }
            out.flush();
        } finally {
            measured.forEach(m -> m.model.close());
        }
        return ExitCodes.OK;
    }

    /**
     * The options with a context of {@code -p + -n} tokens unless {@code --opt ctx} is given: what a run needs, as
     * llama-bench sizes its context, so that memory is compared for the same KV cache (the 1B shape's whole 4096-token
     * context takes 128 MB of cache).
     */
    private ModelOptions withRunContext(ModelOptions options) {
        if (ModelOptions.parseOpts(options.opts).containsKey("ctx")) {
            return options;
        }
        options.opts.add("ctx=" + (promptTokens + genTokens));
        return options;
    }

    /** {@code MODEL [OPTIONS]}: a model and the options it is opened with, as after {@code -m}. */
    private static ModelOptions versusOptions(String options) {
        List<String> words = new ArrayList<>(Arrays.asList(options.trim().split("\\s+")));
        if (words.get(0).isEmpty() || words.get(0).startsWith("-")) {
            throw new UsageException("--vs \"" + options + "\": expected the model first, e.g. --vs \"DIR --opt"
                    + " dx=off\"");
        }
        words.add(0, "-m");
        Versus versus = new Versus();
        try {
            new CommandLine(versus).parseArgs(words.toArray(String[]::new));
            versus.model.located();
            versus.model.routeOptions();
        } catch (CommandLine.ParameterException | UsageException e) {
            throw new UsageException("--vs \"" + options + "\": " + e.getMessage());
        }
        return versus.model;
    }

    /** Token ids drawn past the first few (special tokens), the same for every run. */
    /** Random token ids past the first three (special in most vocabularies); run r's first token is its own. */
    private static int[] randomPrompt(int vocab, int n, int run) {
        SplittableRandom random = new SplittableRandom(42 + run);
        int span = Math.max(1, vocab - 3);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = Math.min(vocab - 1, 3 + random.nextInt(span));
        }
        ids[0] = Math.min(vocab - 1, 3 + run % span);
        return ids;
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private void table(PrintWriter out, Measured m) {
        row(out, m, "pp" + promptTokens, m.pp);
        row(out, m, "tg" + genTokens + " @ d" + promptTokens, m.tg);
    }

    private void row(PrintWriter out, Measured m, String test, List<Double> v) {
        out.printf(Locale.ROOT, "| %s | %s | %s | %s | %.2f | %.2f | %.2f |%n", m.model.id(), m.model.info().route(),
                m.device, test, median(v), v.stream().mapToDouble(d -> d).min().orElse(0),
                v.stream().mapToDouble(d -> d).max().orElse(0));
    }

    private String json(Measured m) {
        return String.format(Locale.ROOT, "{\"model\":\"%s\",\"route\":\"%s\",\"device\":\"%s\",\"n_prompt\":%d,"
                        + "\"n_gen\":%d,\"repetitions\":%d,\"pp_tok_s\":%.3f,\"tg_tok_s\":%.3f,\"pp_runs\":%s,\"tg_runs\":%s}",
                m.model.id().replace("\"", "'"), m.model.info().route(), m.device, promptTokens, genTokens, runs,
                median(m.pp), median(m.tg), array(m.pp), array(m.tg));
    }

    private static String array(List<Double> v) {
        return Arrays.toString(v.stream().map(d -> String.format(Locale.ROOT, "%.3f", d)).toArray());
    }
}
