package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestMulti;

import java.util.Map;

/**
 * Anthropic's Messages API: {@code POST /v1/messages}, streamed or not, on the chat path, and
 * {@code POST /v1/messages/count_tokens}. Errors come in Anthropic's shape.
 */
@Path(AnthropicFormat.PATH)
public class AnthropicResource {

    @Inject
    GenerationService service;

    @Inject
    ObjectMapper mapper;

    @POST
    @Blocking
    public RestMulti<byte[]> messages(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        return HttpAnswers.toHttp(messages(JsonRequest.parse(body, mapper)));
    }

    GenerationService.Answer messages(JsonRequest anthropic) {
        ChatRequest request = chat(anthropic, false);
        return service.chat(request, (model, name, params, promptTokens) -> new AnthropicFormat(name, promptTokens));
    }

    /** The prompt's tokens as the chat template renders the request: {@code {"input_tokens"}}. */
    @POST
    @Path("count_tokens")
    @Blocking
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Integer> countTokens(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        ChatRequest request = chat(JsonRequest.parse(body, mapper), true);
        return Map.of("input_tokens", service.prompt(service.modelFor(request.model()), request).ids().length);
    }

    private ChatRequest chat(JsonRequest anthropic, boolean counting) {
        return ChatRequest.read(JsonRequest.of(AnthropicRequest.toChat(anthropic, counting)), service.defaults());
    }
}
