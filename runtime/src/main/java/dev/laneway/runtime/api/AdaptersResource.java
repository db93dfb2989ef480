package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.runtime.serve.AdapterCatalog;
import dev.laneway.runtime.serve.LanewayConfig;
import dev.laneway.runtime.serve.ManagedModel;
import dev.laneway.runtime.serve.ModelService;
import dev.laneway.spi.ServedModel;
import io.smallrye.common.annotation.Blocking;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * LoRA adapters at run time, as vLLM loads and unloads them ({@code POST /v1/load_lora_adapter},
 * {@code /v1/unload_lora_adapter}, each adapter of the default model a model id of its own) and as llama-server scales
 * them ({@code GET} and {@code POST /lora-adapters}: the scales requests for the base model apply them at). Adapters are
 * read only from the directory {@code --lora-dir} names.
 */
@Path("/")
public class AdaptersResource {

    @Inject
    GenerationService service;

    @Inject
    ModelService models;

    @Inject
    LanewayConfig config;

    @Inject
    ObjectMapper mapper;

    /** vLLM's: loads {@code lora_path} (under --lora-dir) as model {@code lora_name} of the default model. */
    @POST
    @Path("v1/load_lora_adapter")
    @Blocking
    @Produces(MediaType.TEXT_PLAIN)
    public String load(@HeaderParam("Content-Type") String contentType, byte[] body) {
        JsonRequest r = request(contentType, body, Set.of("lora_name", "lora_path", "load_inplace"));
        String name = r.string("lora_name").orElseThrow(() -> ApiException.invalidValue("lora_name",
                "lora_name is required"));
        String given = r.string("lora_path").orElseThrow(() -> ApiException.invalidValue("lora_path",
                "lora_path is required"));
        java.nio.file.Path path = insideLoraDir(given);
        boolean replace = r.bool("load_inplace").orElse(false);
        if (models.adapters().find(name).isPresent()) {
            if (!replace) {
                throw ApiException.invalidValue("lora_name", "the adapter '" + name + "' is loaded already (give"
                        + " load_inplace to replace it)");
            }
        } else {
            try {
                models.checkAdapterName(name);
            } catch (IllegalArgumentException e) {
                throw ApiException.invalidValue("lora_name", e.getMessage());
            }
        }
        ManagedModel base = service.managed();
        ServedModel served = service.readyModel(base);
        try {
            served.loadAdapter(name, path);
        } catch (IOException | IllegalArgumentException | UnsupportedOperationException e) {
            throw ApiException.invalidValue("lora_path", "cannot load adapter '" + name + "' for model " + base.id()
                    + ": " + PublicText.of(e.getMessage()));
        }
        models.adapters().put(new AdapterCatalog.Adapter(name, base.id(), path));
        return "Success: LoRA adapter '" + name + "' added successfully.";
    }

    /** vLLM's: unloads adapter {@code lora_name}; running generations keep it to their end. */
    @POST
    @Path("v1/unload_lora_adapter")
    @Produces(MediaType.TEXT_PLAIN)
    public String unload(@HeaderParam("Content-Type") String contentType, byte[] body) {
        JsonRequest r = request(contentType, body, Set.of("lora_name", "lora_int_id"));
        String name = r.string("lora_name").orElseThrow(() -> ApiException.invalidValue("lora_name",
                "lora_name is required"));
        AdapterCatalog.Adapter adapter = models.adapters().find(name).orElseThrow(() -> ApiException.http(404,
                "model_not_found", "the adapter '" + name + "' is not loaded"));
        models.adapters().remove(name);
        models.find(adapter.base()).flatMap(ManagedModel::model).ifPresent(m -> m.unloadAdapter(name));
        return "Success: LoRA adapter '" + name + "' removed successfully.";
    }

    /** One adapter of the default model as llama-server lists it: its number, file and scale. */
    public record Listed(int id, String path, float scale) {
    }

    /** llama-server's: the default model's adapters, numbered, with the scales base-model requests apply. */
    @GET
    @Path("lora-adapters")
    @Produces(MediaType.APPLICATION_JSON)
    public List<Listed> list() {
        List<AdapterCatalog.Adapter> of = models.adapters().of(service.managed().id());
        List<Listed> listed = new ArrayList<>();
        for (int id = 0; id < of.size(); id++) {
            listed.add(new Listed(id, PublicText.of(of.get(id).path().toString()),
                    models.adapters().scale(of.get(id).name())));
        }
        return listed;
    }

    /** llama-server's: sets the scales, {@code [{"id": 0, "scale": 0.5}, ...]}; adapters left out go back to 0. */
    @POST
    @Path("lora-adapters")
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Boolean> scale(@HeaderParam("Content-Type") String contentType, byte[] body) {
        HttpAnswers.requireJson(contentType);
        JsonNode entries;
        try {
            entries = mapper.readTree(body);
        } catch (IOException e) {
            throw ApiException.invalidJson("the body is not JSON");
        }
        if (entries == null || !entries.isArray()) {
            throw ApiException.invalidValue("lora", "the body is an array of {\"id\", \"scale\"} objects");
        }
        List<AdapterCatalog.Adapter> of = models.adapters().of(service.managed().id());
        Map<String, Float> scales = new LinkedHashMap<>();
        for (JsonNode e : entries) {
            JsonNode id = e.path("id");
            JsonNode scale = e.path("scale");
            if (!e.isObject() || e.size() != 2 || !id.isIntegralNumber() || id.asInt() < 0 || id.asInt() >= of.size()
                    || !scale.isNumber() || !Double.isFinite(scale.asDouble())) {
                throw ApiException.invalidValue("lora", "each entry is {\"id\": 0 to " + (of.size() - 1)
                        + ", \"scale\": number}, was " + e);
            }
            scales.put(of.get(id.asInt()).name(), (float) scale.asDouble());
        }
        for (AdapterCatalog.Adapter a : of) {
            models.adapters().scale(a.name(), scales.getOrDefault(a.name(), 0f));
        }
        return Map.of("success", true);
    }

    private JsonRequest request(String contentType, byte[] body, Set<String> fields) {
        HttpAnswers.requireJson(contentType);
        JsonRequest r = JsonRequest.parse(body, mapper);
        for (String field : r.fieldNames()) {
            if (!fields.contains(field)) {
                throw ApiException.invalidValue(field, field + " is not supported");
            }
        }
        return r;
    }

    /**
     * {@code given} resolved in --lora-dir, which it must not leave (links followed).
     *
     * @throws ApiException 403 when loading at run time is off; 400 for a path outside the directory or missing
     */
    private java.nio.file.Path insideLoraDir(String given) {
        java.nio.file.Path dir = config.loraDir().map(java.nio.file.Path::of).orElseThrow(() -> ApiException.http(403,
                "forbidden", "loading adapters at run time is off: start the server with --lora-dir DIR"));
        try {
            java.nio.file.Path root = dir.toRealPath();
            java.nio.file.Path path = root.resolve(given).normalize();
            if (!Files.exists(path) || !path.toRealPath().startsWith(root)) {
                throw ApiException.invalidValue("lora_path", "lora_path must name an adapter file or PEFT directory"
                        + " inside the server's adapter directory, was '" + PublicText.of(given) + "'");
            }
            return path.toRealPath();
        } catch (IOException e) {
            throw ApiException.invalidValue("lora_path", "cannot read '" + PublicText.of(given) + "'");
        }
    }
}
