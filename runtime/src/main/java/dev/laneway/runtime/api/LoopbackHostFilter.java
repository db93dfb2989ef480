package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * A server bound to a loopback address answers only requests addressed to a loopback name or address. A web page
 * that points a name of its own at 127.0.0.1 (DNS rebinding) reaches the port, but its requests carry that name in
 * their {@code Host} header, and are refused before any other handler sees them. A server bound to another address is
 * meant to be reached by other names, and checks none.
 */
@ApplicationScoped
public class LoopbackHostFilter {

    @ConfigProperty(name = "quarkus.http.host")
    String bindHost;

    @Inject
    ObjectMapper mapper;

    void install(@Observes Router router) {
        if (isLoopback(bindHost)) {
            router.route().order(Integer.MIN_VALUE).handler(this::check);
        }
    }

    private void check(RoutingContext ctx) {
        String host = ctx.request().getHeader("Host");
        if (host == null || isLoopback(hostName(host))) {
            ctx.next();
            return;
        }
        HttpReply reply = HttpReply.error(ApiException.http(403, "host_not_allowed", "this server listens on a"
                + " loopback address and answers only requests to a loopback name or address (Host: localhost,"
                + " 127.0.0.1 or [::1]), not to '" + printable(host) + "'"), ctx.normalizedPath(), mapper);
        reply.headers().forEach(ctx.response()::putHeader);
        ctx.response().setStatusCode(reply.status()).end(Buffer.buffer(reply.body()));
    }

    /** The name in a {@code Host} header, without its port: {@code [::1]:8080} is {@code ::1}. */
    static String hostName(String header) {
        String h = header.trim();
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end < 0 ? h : h.substring(1, end);
        }
        int colon = h.indexOf(':');
        return colon >= 0 && colon == h.lastIndexOf(':') ? h.substring(0, colon) : h;
    }

    /** Whether a name or address is loopback: {@code localhost} or a loopback address, never looked up. */
    static boolean isLoopback(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        if (n.startsWith("[") && n.endsWith("]")) {
            n = n.substring(1, n.length() - 1);
        }
        if (n.equals("localhost") || n.endsWith(".localhost")) {
            return true;
        }
        if (!n.matches("[0-9.]+|[0-9a-f:.]*:[0-9a-f:.]*")) {
            return false;
        }
        try {
            return InetAddress.getByName(n).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static String printable(String s) {
        String cut = s.length() > 100 ? s.substring(0, 100) + "..." : s;
        return cut.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
