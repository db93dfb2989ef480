package dev.laneway.spi;

/** Facts about the SPI itself. */
public final class Spi {
    /**
     * The version of this contract. A route reports the version it was built against in {@link Route#spiVersion()};
     * the runtime warns when a route asks for a newer one than it speaks. Version 2 added request routing
     * ({@link ServedModel#route}, {@link RouteDecision}, {@link RoutingInput}, {@link Laya}).
     */
    public static final int VERSION = 2;

    private Spi() {
    }
}
