package dev.laneway.runtime.cli;

import dev.laneway.runtime.text.IncrementalText;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RoutingInput;
import dev.laneway.spi.Sampling;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/** {@code laneway run}: one completion, streamed to standard output as it is generated. */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Generate one completion and stream it to stdout.")
final class RunCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Option(names = {"-p", "--prompt"}, required = true, paramLabel = "PROMPT", description = "The prompt.")
    String prompt;

    @Option(names = {"-n", "--n-predict"}, paramLabel = "N", defaultValue = "64",
            description = "Tokens to generate at most (default: ${DEFAULT-VALUE}).")
    int tokens;

    @Option(names = "--temp", paramLabel = "T", defaultValue = "0",
            description = "Temperature; 0 picks the most likely token (default: ${DEFAULT-VALUE}).")
    double temperature;

    @Option(names = "--top-k", paramLabel = "K", defaultValue = "40", description = "Top-k (default: ${DEFAULT-VALUE}).")
    int topK;

    @Option(names = "--top-p", paramLabel = "P", defaultValue = "0.95", description = "Top-p (default: ${DEFAULT-VALUE}).")
    double topP;

    @Option(names = "--min-p", paramLabel = "P", defaultValue = "0.05", description = "Min-p (default: ${DEFAULT-VALUE}).")
    double minP;

    @Option(names = "--repeat-penalty", paramLabel = "R", defaultValue = "1.0",
            description = "Repetition penalty over the last 64 tokens; 1 is off (default: ${DEFAULT-VALUE}).")
    double repeatPenalty;

    @Option(names = "--seed", paramLabel = "S", description = "Seed of the sampler; the same seed gives the same text.")
    Long seed;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        if (tokens < 1) {
            throw new UsageException("-n must be at least 1, was " + tokens);
        }
        Sampling sampling;
        try {
            sampling = new Sampling(temperature, topK, topP, minP, repeatPenalty, 64,
                    seed == null ? OptionalLong.empty() : OptionalLong.of(seed));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (ServedModel m = OpenedModel.open(model, err)) {
            int[] ids = m.tokenize(prompt, true, true);
            // With --laya the router decides (and logs) where the prompt runs.
            Optional<RouteDecision> route = m.route(RoutingInput.prompt(prompt));
            IncrementalText text = new IncrementalText(m);
            out.print(prompt);
            out.flush();
            TokenSink sink = t -> {
                out.print(text.add(t.id()));
                out.flush();
                return true;
            };
            GenerationRequest request = new GenerationRequest(ids, tokens, sampling);
            GenerationResult r = route.isPresent() ? m.generate(request, route.get(), sink) : m.generate(request, sink);
            out.println(text.flush());
            out.flush();
            err.printf("%nprompt: %d tokens, %.1f tok/s; generated: %d tokens, %.1f tok/s; finish: %s%n",
                    r.promptTokens(), perSecond(r.promptTokens(), r.promptNanos()), r.generatedTokens(),
                    perSecond(r.generatedTokens(), r.generationNanos()), r.finish().name().toLowerCase());
            route.ifPresent(d -> err.println(routeLine(m, d)));
            err.flush();
        }
        return ExitCodes.OK;
    }

    /** {@code route: <class> <confidence> <device> (candidates: ...)}: where the router sent the prompt. */
    static String routeLine(ServedModel m, RouteDecision d) {
        return "route: " + d.describe() + " (candidates: "
                + m.info().metadata().getOrDefault("laya.candidates", m.info().device()) + ")";
    }

    static double perSecond(int tokens, long nanos) {
        return nanos > 0 ? tokens * 1e9 / nanos : 0;
    }
}
