package dev.laneway.runtime.api;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/**
 * {@code POST /rerank}, {@code /reranking}, {@code /v1/rerank} and {@code /v1/reranking}: refused by name (501), so that
 * a client learns why rather than meeting a 404. Ranking needs a reranker's ranking head (a GGUF with
 * {@code pooling_type} rank and a {@code cls.output} tensor), which no model served here has.
 */
@Path("/")
public class RerankResource {

    @POST
    @Path("{v: (v1/)?}{name: rerank|reranking}")
    public void rerank() {
        throw ApiException.http(501, "not_supported", "this server does not rerank: the served model has no ranking"
                + " head (a reranker's pooling_type rank and cls.output tensor), and reranker models are not served"
                + " yet");
    }
}
