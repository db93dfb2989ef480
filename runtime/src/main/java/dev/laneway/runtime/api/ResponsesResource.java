package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import org.jboss.resteasy.reactive.RestMulti;

/** OpenAI's Responses API: {@code POST /v1/responses} (and {@code /responses}), streamed or not, on the chat path. */
@Path("/")
public class ResponsesResource {

    @Inject
    GenerationService service;

    @Inject
    ObjectMapper mapper;

    @POST
    @Path("v1/responses")
    @Blocking
    public RestMulti<byte[]> responses(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(responses(JsonRequest.parse(body, mapper)));
    }

    GenerationService.Answer responses(JsonRequest request) {
        ChatRequest chat = ChatRequest.read(JsonRequest.of(ResponsesRequest.toChat(request)), service.defaults());
        return service.chat(chat, (model, name, params, promptTokens) -> new ResponsesFormat(name, params,
                promptTokens));
    }

    /** The prompt tokens of a Responses request, as the chat template renders it: {@code {"input_tokens"}}. */
    @POST
    @Path("{v: (v1/)?}responses/input_tokens")
    @Blocking
    @jakarta.ws.rs.Produces(jakarta.ws.rs.core.MediaType.APPLICATION_JSON)
    public java.util.Map<String, Integer> inputTokens(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        ChatRequest chat = ChatRequest.read(JsonRequest.of(ResponsesRequest.toChat(JsonRequest.parse(body, mapper))),
                service.defaults());
        return java.util.Map.of("input_tokens", service.prompt(service.modelFor(chat.model()), chat).ids().length);
    }

    @POST
    @Path("responses")
    @Blocking
    public RestMulti<byte[]> responsesWithoutV1(@HeaderParam("Content-Type") String contentType, byte[] body) {
        return responses(contentType, body);
    }
}
