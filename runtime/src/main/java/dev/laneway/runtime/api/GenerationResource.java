package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.api.GenerationService.Answer;
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
        return HttpAnswers.toHttp(completions(JsonRequest.parse(body, mapper)));
    }

    Answer completions(JsonRequest request) {
        return service.complete(CompletionRequest.read(request, service.defaults()), false);
    }

    @POST
    @Path("{v: (v1/)?}chat/completions")
    @Blocking
    public RestMulti<byte[]> chatCompletions(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(chatCompletions(JsonRequest.parse(body, mapper)));
    }

    Answer chatCompletions(JsonRequest request) {
        return service.chat(ChatRequest.read(request, service.defaults()));
    }
}
