package dev.laneway.runtime.routes;

import dev.laneway.spi.Claim;
import dev.laneway.spi.OptionRefusal;
import dev.laneway.spi.Route;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * A route for dispatch tests: claims directories holding {@code <name>.marker}, records every call, and never serves
 * (opening fails the test's expectations by recording the call).
 */
final class TestRoute implements Route {
    final String name;
    final int priority;
    boolean optional;
    boolean generic;
    Set<String> optKeys = Set.of();
    Function<RouteOptions, Optional<OptionRefusal>> refusal = o -> Optional.empty();
    Function<Path, Claim> claim;
    final List<String> calls = new ArrayList<>();

    TestRoute(String name, int priority) {
        this.name = name;
        this.priority = priority;
        this.claim = dir -> Files.exists(dir.resolve(name + ".marker"))
                ? Claim.mine(name + " marker") : Claim.notMine("needs " + name + ".marker");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int priority() {
        return priority;
    }

    @Override
    public boolean optional(RouteOptions options) {
        return optional;
    }

    @Override
    public boolean generic() {
        return generic;
    }

    @Override
    public Claim claim(Path dir, RouteOptions options) {
        calls.add("claim");
        return claim.apply(dir);
    }

    @Override
    public Set<String> optKeys() {
        return optKeys;
    }

    @Override
    public Optional<OptionRefusal> refusal(RouteOptions options) {
        return refusal.apply(options);
    }

    @Override
    public ServedModel open(Path dir, RouteOptions options, RouteContext context) {
        calls.add("open");
        throw new IllegalStateException("test routes do not serve");
    }
}
