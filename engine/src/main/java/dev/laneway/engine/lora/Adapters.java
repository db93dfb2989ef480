package dev.laneway.engine.lora;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.spi.AdapterUse;
import dev.laneway.spi.InvalidRequestException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The adapters one model has loaded, by name. Loading reads the adapter and has the forward check it (its matrices
 * and shapes); a generation resolves the names it asks for into an {@link AdapterSet} when it starts and keeps those
 * adapters to its end, whatever is loaded or unloaded meanwhile.
 */
public final class Adapters {
    private final ModelConfig config;
    private final Consumer<LoraAdapter> check;
    private final Map<String, LoraAdapter> loaded = new LinkedHashMap<>();

    /**
     * @param config the base model's config
     * @param check  the forward's check of an adapter, throwing IllegalArgumentException or
     *               UnsupportedOperationException naming what does not fit
     */
    public Adapters(ModelConfig config, Consumer<LoraAdapter> check) {
        this.config = config;
        this.check = check;
    }

    /** Reads, checks and loads the adapter at {@code path} under {@code name}, replacing one of that name. */
    public LoraAdapter load(String name, Path path) throws IOException {
        if (name.isBlank()) {
            throw new IllegalArgumentException("an adapter needs a name");
        }
        LoraAdapter adapter = LoraReader.read(name, path, config);
        check.accept(adapter);
        synchronized (this) {
            loaded.put(name, adapter);
        }
        return adapter;
    }

    public synchronized boolean unload(String name) {
        return loaded.remove(name) != null;
    }

    public synchronized List<LoraAdapter> loaded() {
        return List.copyOf(loaded.values());
    }

    /**
     * The adapters a generation asks for; null for none (scales of 0 included).
     *
     * @throws InvalidRequestException naming an adapter that is not loaded, or one named twice
     */
    public synchronized AdapterSet resolve(List<AdapterUse> uses) {
        List<LoraAdapter> adapters = new ArrayList<>();
        float[] scales = new float[uses.size()];
        java.util.Set<String> named = new java.util.HashSet<>();
        for (AdapterUse use : uses) {
            LoraAdapter adapter = loaded.get(use.name());
            if (adapter == null) {
                throw new InvalidRequestException("lora", "no adapter '" + use.name() + "' is loaded"
                        + (loaded.isEmpty() ? "" : " (loaded: " + String.join(", ", loaded.keySet()) + ")"));
            }
            if (!named.add(use.name())) {
                throw new InvalidRequestException("lora", "adapter '" + use.name() + "' is named twice");
            }
            if (use.scale() != 0) {
                scales[adapters.size()] = use.scale();
                adapters.add(adapter);
            }
        }
        return adapters.isEmpty() ? null : new AdapterSet(adapters, java.util.Arrays.copyOf(scales, adapters.size()));
    }
}
