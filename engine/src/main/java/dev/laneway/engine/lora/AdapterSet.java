package dev.laneway.engine.lora;

import java.util.List;

/**
 * The adapters one generation applies, each at the scale it asks for (the adapter's own {@code alpha / rank} comes on
 * top). Rows of one batch may carry different sets; the forward adds each adapter's product over the rows that use it.
 */
public final class AdapterSet {
    private final LoraAdapter[] adapters;
    private final float[] scales;

    AdapterSet(List<LoraAdapter> adapters, float[] scales) {
        this.adapters = adapters.toArray(new LoraAdapter[0]);
        this.scales = scales.clone();
    }

    public int size() {
        return adapters.length;
    }

    public LoraAdapter adapter(int i) {
        return adapters[i];
    }

    /** The scale the generation applies {@code adapter} at; 0 when it does not. */
    public float scaleOf(LoraAdapter adapter) {
        for (int i = 0; i < adapters.length; i++) {
            if (adapters[i] == adapter) {
                return scales[i];
            }
        }
        return 0f;
    }

    /**
     * What keeps the KV cache of these adapters apart from the base model's and from other sets': a cached prompt is
     * reused only under the same adapters at the same scales, read by the same reading (a reloaded adapter does not
     * reuse what the one it replaced computed).
     */
    public String cacheSalt() {
        StringBuilder salt = new StringBuilder();
        for (int i = 0; i < adapters.length; i++) {
            salt.append("\u0000lora ").append(adapters[i].name()).append('@')
                    .append(adapters[i].serial()).append('×').append(scales[i]);
        }
        return salt.toString();
    }
}
