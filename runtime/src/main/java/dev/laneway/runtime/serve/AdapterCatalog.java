package dev.laneway.runtime.serve;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The LoRA adapters the server serves, each a model id of its own over its base model: those {@code --lora} names,
 * then those loaded at run time. A base model's adapters are loaded with it whenever it loads. Requests that name the
 * base model apply the adapters at the server's scales (llama-server's {@code /lora-adapters}), 0 until set.
 */
public final class AdapterCatalog {
    /** One adapter: its id, the base model's id, where it is read from. */
    public record Adapter(String name, String base, Path path) {
    }

    private final Map<String, Adapter> adapters = new LinkedHashMap<>();
    private final Map<String, Float> scales = new HashMap<>();

    /** Adds an adapter, or replaces the one of its name. */
    public synchronized void put(Adapter adapter) {
        adapters.put(adapter.name(), adapter);
    }

    /** Removes an adapter; false when there was none of that name. */
    public synchronized boolean remove(String name) {
        scales.remove(name);
        return adapters.remove(name) != null;
    }

    public synchronized Optional<Adapter> find(String name) {
        return Optional.ofNullable(adapters.get(name));
    }

    /** Every adapter, in the order they were added. */
    public synchronized List<Adapter> all() {
        return List.copyOf(adapters.values());
    }

    /** The adapters of base model {@code base}, in order: their index is llama-server's adapter id. */
    public synchronized List<Adapter> of(String base) {
        List<Adapter> of = new ArrayList<>();
        for (Adapter a : adapters.values()) {
            if (a.base().equals(base)) {
                of.add(a);
            }
        }
        return of;
    }

    /** The scale requests for the base model apply {@code name} at when they set none. */
    public synchronized float scale(String name) {
        return scales.getOrDefault(name, 0f);
    }

    public synchronized void scale(String name, float scale) {
        scales.put(name, scale);
    }
}
