package dev.laneway.spi;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * A model route: a plugin that recognises model directories of some shape and serves them.
 *
 * <p>The runtime asks routes in {@linkplain #priority() priority} order, highest first, and the model-generic route
 * last whatever it declares. For each route it calls {@link #claim}; on a claim it checks the options with
 * {@link #refusal} and {@link #optKeys}, and only then calls {@link #open}. Nothing is opened on a device before every
 * option has been accepted.
 *
 * <p>Implementations must have a public no-argument constructor and be listed in
 * {@code META-INF/services/dev.laneway.spi.Route}. Construction must be cheap and must not touch any device.
 */
public interface Route {

    /** A short lower-case name, unique among routes, e.g. {@code generic}. */
    String name();

    /** Higher is asked first. The model-generic route is asked last regardless. */
    int priority();

    /**
     * Whether this route may step aside for a directory it recognises but cannot serve with these options. An
     * optional route's decline lets the next route serve the directory as if this one were absent; a non-optional
     * route's decline of a directory it {@linkplain Claim.Declined#recognised() recognises} is fatal.
     */
    default boolean optional(RouteOptions options) {
        return false;
    }

    /**
     * Inspects a model directory, cheaply (metadata only, no weights), and says whether it is this route's.
     *
     * @param dir     the model directory
     * @param options the serve options, for routes whose answer depends on them (e.g. {@code --opt dx=off})
     */
    Claim claim(Path dir, RouteOptions options);

    /** The {@code --opt} keys this route understands. */
    Set<String> optKeys();

    /**
     * The first option this route cannot honour, if any. Called only for a directory it has claimed. An unknown
     * {@code --opt} key is checked by the runtime against {@link #optKeys()}; this is for the other options
     * ({@code --streams}, {@code --laya}, {@code --device}, {@code --alias}) and for {@code --opt} values. A route
     * whose models cannot route requests ({@link ServedModel#route}) refuses {@code --laya} here; it never opens a
     * model and ignores it.
     */
    Optional<OptionRefusal> refusal(RouteOptions options);

    /**
     * Opens a claimed directory for serving. Called once, after the options were accepted.
     *
     * @throws RouteException when the directory cannot be served after all (corrupt weights, a device that fails)
     */
    ServedModel open(Path dir, RouteOptions options, RouteContext context) throws RouteException;

    /** The SPI version this route was built against. */
    default int spiVersion() {
        return Spi.VERSION;
    }

    /** Whether this is the model-generic route that is asked last. Only the project's generic route says yes. */
    default boolean generic() {
        return false;
    }
}
