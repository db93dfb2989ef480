package dev.laneway.runtime.api;

import dev.laneway.spi.ModelHealth;
import dev.laneway.spi.ServedModel;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.util.List;
import java.util.Map;

/**
 * {@code GET /v1/diagnostics}: the served model's recent device faults (what was in flight, for how long, the
 * context's age and idle time, digests of the argument buffers) and whether its device is recovering. Behind the API
 * key when one is set.
 */
@Path("/v1/diagnostics")
@Produces(MediaType.APPLICATION_JSON)
public class DiagnosticsResource {

    @Inject
    GenerationService service;

    @GET
    public Diagnostics get() {
        ServedModel model = service.readyModel();
        ModelHealth health = model.health();
        Map<String, String> data = new java.util.LinkedHashMap<>();
        health.data().forEach((k, v) -> data.put(k, PublicText.of(v)));
        List<Map<String, Object>> faults = model.faults().stream().map(f -> {
            Map<String, Object> fault = new java.util.LinkedHashMap<>(f);
            fault.replaceAll((k, v) -> v instanceof String text ? PublicText.of(text) : v);
            return fault;
        }).toList();
        return new Diagnostics(model.id(), model.info().route(), model.info().device(), health.up(),
                PublicText.of(health.reason()), data, faults);
    }

    /** The answer. */
    public record Diagnostics(String model, String route, String device, boolean healthy, String reason,
                              Map<String, String> state, List<Map<String, Object>> faults) {
    }
}
