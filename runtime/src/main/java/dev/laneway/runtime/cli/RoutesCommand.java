package dev.laneway.runtime.cli;

import dev.laneway.runtime.routes.DispatchReport;
import dev.laneway.runtime.routes.Dispatcher;
import dev.laneway.runtime.routes.RouteSetup;
import dev.laneway.runtime.routes.Verdict;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code laneway routes}: which route serves a model, and every route's verdict, without loading weights. */
@Command(name = "routes", mixinStandardHelpOptions = true,
        description = "Show which route serves a model, and every route's verdict and reason.")
final class RoutesCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        var options = model.routeOptions();
        Path dir = ContainerPaths.containerDir(model.located(), spec.commandLine().getErr());
        DispatchReport report = new Dispatcher(RouteSetup.catalog()).dispatch(dir, options);
        print(report, spec.commandLine().getOut());
        return report.serving().isPresent() ? ExitCodes.OK : ExitCodes.USAGE;
    }

    static void print(DispatchReport report, PrintWriter out) {
        out.println("model: " + report.dir());
        out.println("holds: " + report.shape());
        int nameWidth = report.verdicts().stream().mapToInt(v -> v.route().name().length()).max().orElse(4);
        int i = 1;
        for (Verdict v : report.verdicts()) {
            String flags = v.route().generic() ? "generic, asked last" : "priority " + v.route().priority();
            out.printf("%d. %-" + nameWidth + "s  %-21s  %-9s  %s%n", i++, v.route().name(), "(" + flags + ")",
                    v.kind().label(), v.reason());
        }
        report.serving().ifPresentOrElse(
                r -> out.println("served by: " + r.name()),
                () -> out.println("refused: " + report.refusal().orElseThrow()));
        out.flush();
    }
}
