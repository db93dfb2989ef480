package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.ServedModel;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.ArrayList;
import java.util.List;

/** llama-server's tokenizer endpoints: {@code POST /tokenize}, {@code /detokenize} and {@code /apply-template}. */
@Path("/")
@Produces(MediaType.APPLICATION_JSON)
public class TokenizeResource {

    @Inject
    GenerationService service;

    @Inject
    ObjectMapper mapper;

    /**
     * {@code {"content", "add_special": false, "parse_special": true, "with_pieces": false}} →
     * {@code {"tokens": [ids]}}, or {@code [{"id", "piece"}]} with pieces.
     */
    @POST
    @Path("tokenize")
    @Blocking
    public Tokens tokenize(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        String content = r.string("content")
                .orElseThrow(() -> ApiException.invalidValue("content", "content is required"));
        boolean addSpecial = r.bool("add_special").orElse(false);
        boolean parseSpecial = r.bool("parse_special").orElse(true);
        boolean withPieces = r.bool("with_pieces").orElse(false);
        ServedModel model = service.readyModel();
        int[] ids = model.tokenize(content, addSpecial, parseSpecial);
        List<Object> tokens = new ArrayList<>(ids.length);
        for (int id : ids) {
            tokens.add(withPieces ? new Piece(id, model.detokenize(new int[]{id})) : id);
        }
        return new Tokens(tokens);
    }

    /** {@code {"tokens": [ids]}} → {@code {"content"}}. */
    @POST
    @Path("detokenize")
    @Blocking
    public Content detokenize(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        JsonNode node = r.raw("tokens");
        if (node == null) {
            throw ApiException.invalidValue("tokens", "tokens is required");
        }
        if (!node.isArray()) {
            throw ApiException.invalidType("tokens", "tokens must be a list of token ids");
        }
        ServedModel model = service.readyModel();
        int vocab = model.info().vocabSize();
        int[] ids = new int[node.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = JsonRequest.integer(node.get(i), "tokens");
            if (ids[i] < 0 || ids[i] >= vocab) {
                throw ApiException.invalidValue("tokens", "token id " + ids[i] + " is outside the vocabulary (0 to "
                        + (vocab - 1) + ")");
            }
        }
        return new Content(model.detokenize(ids));
    }

    /**
     * {@code {"messages": [...]}} → {@code {"prompt"}}: the conversation as the chat template renders it, with the
     * request's {@code tools} and {@code chat_template_kwargs} as a chat completion would.
     */
    @POST
    @Path("apply-template")
    @Blocking
    public Prompt applyTemplate(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        ChatRequest request = ChatRequest.read(JsonRequest.parse(body, mapper), service.defaults());
        return new Prompt(service.prompt(service.modelFor(request.model()), request).text());
    }

    public record Tokens(List<Object> tokens) {
    }

    public record Piece(int id, String piece) {
    }

    public record Content(String content) {
    }

    public record Prompt(String prompt) {
    }
}
