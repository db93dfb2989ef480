package dev.laneway.runtime.routes;

import dev.laneway.spi.Claim;
import dev.laneway.spi.Laya;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteException;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Chooses the route that serves a model directory (docs/routes.md): routes are asked in order, the first claim whose
 * options are all accepted wins. An optional route that cannot serve steps aside; a non-optional one that recognises
 * the directory but cannot serve it, or cannot honour an option, refuses fatally. A {@code --laya} directory without
 * a router checkpoint is refused once a route would serve. Nothing is opened here.
 */
public final class Dispatcher {
    private final List<Route> routes;

    public Dispatcher(RouteCatalog catalog) {
        this.routes = catalog.askOrder();
    }

    /** The routes in the order they are asked. */
    public List<Route> routes() {
        return routes;
    }

    /** Asks the routes about {@code dir} and reports who serves it, or why nobody does. */
    public DispatchReport dispatch(Path dir, RouteOptions options) {
        String shape = DirectoryDescription.describe(dir);
        List<Verdict> verdicts = new ArrayList<>();
        Set<String> keysUsedToDecline = new HashSet<>();
        Route serving = null;
        String refusal = null;
        for (Route route : routes) {
            if (serving != null || refusal != null) {
                verdicts.add(new Verdict(route, Verdict.Kind.NOT_ASKED, ""));
                continue;
            }
            boolean optional = isOptional(route, options);
            Claim claim = ask(route, dir, options);
            if (claim instanceof Claim.Declined declined) {
                verdicts.add(new Verdict(route, Verdict.Kind.DECLINED, declined.reason()));
                keysUsedToDecline.addAll(declined.optKeysUsed());
                if (declined.recognised() && !optional) {
                    refusal = "route '" + route.name() + "' cannot serve " + dir + ": " + declined.reason();
                }
                continue;
            }
            Optional<String> unhonoured = unhonouredOption(route, options, keysUsedToDecline);
            Optional<String> noCheckpoint = options.laya().flatMap(Laya::missingCheckpoint);
            if (unhonoured.isEmpty() && noCheckpoint.isPresent()) {
                // The route would honour --laya, but there is nothing to honour: fatal whichever route it is.
                verdicts.add(new Verdict(route, Verdict.Kind.REFUSED, noCheckpoint.get()));
                refusal = noCheckpoint.get();
            } else if (unhonoured.isEmpty()) {
                verdicts.add(new Verdict(route, Verdict.Kind.SERVES, ((Claim.Mine) claim).shape()));
                serving = route;
            } else if (optional) {
                verdicts.add(new Verdict(route, Verdict.Kind.DECLINED, "steps aside: " + unhonoured.get()));
            } else {
                verdicts.add(new Verdict(route, Verdict.Kind.REFUSED, unhonoured.get()));
                refusal = unhonoured.get();
            }
        }
        if (serving == null && refusal == null) {
            refusal = noClaim(dir, shape, verdicts);
        }
        return new DispatchReport(dir, shape, verdicts, Optional.ofNullable(serving), Optional.ofNullable(refusal));
    }

    /**
     * Dispatches and, when a route serves, opens the directory through it. Nothing is opened when the dispatch is
     * refused.
     *
     * @throws DispatchException when no route serves the directory with these options
     * @throws RouteException    when the serving route fails to open it
     */
    public ServedModel open(Path dir, RouteOptions options, RouteContext context)
            throws DispatchException, RouteException {
        Route route = dispatch(dir, options).servingOrThrow();
        return route.open(dir, options, context);
    }

    /** The first option the route cannot honour, as a message naming the route, or nothing. */
    private static Optional<String> unhonouredOption(Route route, RouteOptions options, Set<String> keysUsedToDecline) {
        Set<String> known = safeOptKeys(route);
        for (String key : options.opt().keySet()) {
            if (!known.contains(key) && !keysUsedToDecline.contains(key)) {
                String list = known.isEmpty() ? "none" : String.join(", ", new TreeSet<>(known));
                return Optional.of("--opt " + key + ": unknown key for route '" + route.name() + "' (known: " + list + ")");
            }
        }
        try {
            return route.refusal(options).map(r -> r.message(route.name()));
        } catch (RuntimeException e) {
            return Optional.of(new OptionRefusal("its options", "the route failed to check them (" + e + ")")
                    .message(route.name()));
        }
    }

    private static String noClaim(Path dir, String shape, List<Verdict> verdicts) {
        StringBuilder sb = new StringBuilder("no route serves ").append(dir).append(" (it holds ").append(shape).append(')');
        for (Verdict v : verdicts) {
            sb.append("\n  ").append(v.route().name()).append(": ").append(v.reason());
        }
        return sb.toString();
    }

    /** A route that throws while claiming declines with the failure as its reason; dispatch goes on. */
    private static Claim ask(Route route, Path dir, RouteOptions options) {
        try {
            Claim claim = route.claim(dir, options);
            return claim != null ? claim : Claim.notMine("the route gave no answer");
        } catch (RuntimeException | LinkageError e) {
            return Claim.notMine("the route failed while inspecting the directory: " + e);
        }
    }

    private static boolean isOptional(Route route, RouteOptions options) {
        try {
            return route.optional(options);
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Set<String> safeOptKeys(Route route) {
        try {
            Set<String> keys = route.optKeys();
            return keys != null ? keys : Set.of();
        } catch (RuntimeException e) {
            return Set.of();
        }
    }
}
