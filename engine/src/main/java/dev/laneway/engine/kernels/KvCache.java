package dev.laneway.engine.kernels;

/**
 * Keys and values of past positions for every layer, for one generation stream: per layer two arrays of
 * [position][kvDim] floats, allocated once for the model's context length.
 */
public final class KvCache {
    private final Layer[] layers;
    private final int contextLength;
    private final int kvDim;

    public KvCache(int layers, int contextLength, int kvDim) {
        this.layers = new Layer[layers];
        this.contextLength = contextLength;
        this.kvDim = kvDim;
        for (int l = 0; l < layers; l++) {
            this.layers[l] = new Layer(new float[Math.multiplyExact(contextLength, kvDim)],
                    new float[contextLength * kvDim], kvDim);
        }
    }

    public Layer layer(int l) {
        return layers[l];
    }

    public int contextLength() {
        return contextLength;
    }

    public int kvDim() {
        return kvDim;
    }

    /**
     * One layer's cache.
     *
     * @param keys   [position][kvDim]
     * @param values [position][kvDim]
     * @param kvDim  elements per position
     */
    public record Layer(float[] keys, float[] values, int kvDim) {
        /** Stores {@code batch} rows of keys and values for positions {@code startPos ..}. */
        public void store(float[] k, float[] v, int batch, int startPos) {
            System.arraycopy(k, 0, keys, startPos * kvDim, batch * kvDim);
            System.arraycopy(v, 0, values, startPos * kvDim, batch * kvDim);
        }
    }
}
