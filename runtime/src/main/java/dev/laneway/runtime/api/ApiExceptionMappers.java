package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.RouterException;
import jakarta.inject.Inject;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.Map;

/**
 * Every failure becomes an OpenAI-style error body: the client's mistakes are 4xx naming the field, a device fault is
 * 503, a router that cannot decide is 502, anything else is a 500 whose details stay in the server log.
 */
public class ApiExceptionMappers {
    private static final Logger LOG = Logger.getLogger(ApiExceptionMappers.class);

    /** HTTP's own refusals, by status: the code in the body. */
    private static final Map<Integer, String> HTTP_CODES = Map.of(400, "bad_request", 404, "not_found",
            405, "method_not_allowed", 406, "not_acceptable", 413, "request_too_large", 415,
            "unsupported_media_type");

    @Inject
    ObjectMapper mapper;

    @ServerExceptionMapper
    public Response api(ApiException e, UriInfo uri) {
        return response(HttpReply.error(e, "/" + uri.getPath().replaceFirst("^/", ""), mapper));
    }

    @ServerExceptionMapper
    public Response invalid(InvalidRequestException e, UriInfo uri) {
        return api(ApiException.invalidValue(e.param(), e.getMessage()), uri);
    }

    @ServerExceptionMapper
    public Response device(DeviceFaultException e, UriInfo uri) {
        LOG.warnf("request failed on device %s: %s", e.device(), e.getMessage());
        return api(ApiException.deviceFault(e, "this request"), uri);
    }

    @ServerExceptionMapper
    public Response router(RouterException e, UriInfo uri) {
        LOG.warnf("request not routed: %s", e.getMessage());
        return api(ApiException.routerFailed(e.getMessage()), uri);
    }

    @ServerExceptionMapper
    public Response http(WebApplicationException e, UriInfo uri) {
        int status = e.getResponse().getStatus();
        if (status >= 500) {
            return unexpected(e, uri);
        }
        Response.StatusType type = e.getResponse().getStatusInfo();
        String code = HTTP_CODES.getOrDefault(status, "http_" + status);
        return api(ApiException.http(status, code, type.getReasonPhrase().toLowerCase()), uri);
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e, UriInfo uri) {
        LOG.error("request failed", e);
        return api(ApiException.internal(), uri);
    }

    static Response response(HttpReply reply) {
        Response.ResponseBuilder builder = Response.status(reply.status()).entity(reply.body());
        reply.headers().forEach(builder::header);
        return builder.build();
    }
}
