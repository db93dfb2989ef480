package dev.laneway.runtime.routes;

/** Which routes this build ships, for tests whose expectations depend on it (the dx route is a build profile). */
public final class BuiltRoutes {
    private BuiltRoutes() {
    }

    /** Whether the private dx route is part of this build. */
    public static boolean withDx() {
        return RouteSetup.catalog().askOrder().stream().anyMatch(r -> r.name().equals("dx"));
    }

    /** The route that serves a dense llama-family container on the host: dx when built, else the generic route. */
    public static String denseModelRoute() {
        return withDx() ? "dx" : "generic";
    }
}
