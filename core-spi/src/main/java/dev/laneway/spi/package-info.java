/**
 * The contract between the Laneway runtime and its model routes.
 *
 * <p>A {@link dev.laneway.spi.Route} is a plugin discovered with {@link java.util.ServiceLoader}. The runtime asks
 * every route, in priority order, whether it claims a model directory; the first claim wins and the runtime then
 * {@linkplain dev.laneway.spi.Route#open opens} the directory through that route, which hands back a
 * {@link dev.laneway.spi.ServedModel}. This package depends on the JDK alone, so a third-party route depends on it
 * and nothing else. It evolves by addition: new methods arrive as defaults, and {@link dev.laneway.spi.Spi#VERSION}
 * tells a route which contract the runtime speaks.
 */
package dev.laneway.spi;
