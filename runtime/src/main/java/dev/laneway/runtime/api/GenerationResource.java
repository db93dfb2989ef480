package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * {@code POST /v1/completions} and {@code POST /v1/chat/completions} (also without {@code /v1}, as llama-server
 * serves it). Parsing, tokenizing and the chat template run
 * on a worker thread, which hands the generations to the model's engine loop; the event loop only moves bytes.
 */
@Path("/")
public class GenerationResource {

    @Inject
    GenerationService service;

    @Inject
    ObjectMapper mapper;

    @POST
    @Path("v1/completions")
    @Blocking
    public RestMulti<byte[]> completions(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        CompletionRequest request = CompletionRequest.read(JsonRequest.parse(body, mapper), service.defaults());
        return HttpAnswers.toHttp(service.complete(request, false));
    }

    @POST
    @Path("{v: (v1/)?}chat/completions")
    @Blocking
    public RestMulti<byte[]> chatCompletions(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        ChatRequest request = ChatRequest.read(JsonRequest.parse(body, mapper), service.defaults());
        return HttpAnswers.toHttp(service.chat(request));
    }
}
