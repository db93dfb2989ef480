package dev.laneway.engine.kernels;

/**
 * Keys and values of past positions for every layer, for one generation stream, allocated once for the model's
 * context length: per layer, [position][kvDim] keys and values. They are kept in half precision by default, as
 * llama.cpp keeps them (half the memory and bandwidth, and attention numerics that agree with it), or in single
 * precision.
 */
public final class KvCache {
    /** How keys and values are stored. */
    public enum Precision { F16, F32 }

    private final Layer[] layers;
    private final int contextLength;
    private final int kvDim;
    private final Precision precision;

    /** A single-precision cache. */
    public KvCache(int layers, int contextLength, int kvDim) {
        this(layers, contextLength, kvDim, Precision.F32);
    }

    public KvCache(int layers, int contextLength, int kvDim, Precision precision) {
        this.layers = new Layer[layers];
        this.contextLength = contextLength;
        this.kvDim = kvDim;
        this.precision = precision;
        int n = Math.multiplyExact(contextLength, kvDim);
        for (int l = 0; l < layers; l++) {
            this.layers[l] = precision == Precision.F16
                    ? new Layer(null, null, new short[n], new short[n], kvDim)
                    : new Layer(new float[n], new float[n], null, null, kvDim);
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

    public Precision precision() {
        return precision;
    }

    /** One layer's cache: float arrays in single precision, or half-precision bits. */
    public static final class Layer {
        private final float[] keys;
        private final float[] values;
        private final short[] keys16;
        private final short[] values16;
        private final int kvDim;

        Layer(float[] keys, float[] values, short[] keys16, short[] values16, int kvDim) {
            this.keys = keys;
            this.values = values;
            this.keys16 = keys16;
            this.values16 = values16;
            this.kvDim = kvDim;
        }

        /** Whether keys and values are half precision ({@link #keys16()}, {@link #values16()}). */
        public boolean f16() {
            return keys16 != null;
        }

        /** Single-precision keys, [position][kvDim]; null for a half-precision cache. */
        public float[] keys() {
            return keys;
        }

        /** Single-precision values, [position][kvDim]; null for a half-precision cache. */
        public float[] values() {
            return values;
        }

        /** Half-precision key bits, [position][kvDim]; null for a single-precision cache. */
        public short[] keys16() {
            return keys16;
        }

        /** Half-precision value bits, [position][kvDim]; null for a single-precision cache. */
        public short[] values16() {
            return values16;
        }

        public int kvDim() {
            return kvDim;
        }

        /** Stores {@code batch} rows of keys and values for positions {@code startPos ..}. */
        public void store(float[] k, float[] v, int batch, int startPos) {
            int o = startPos * kvDim;
            int n = batch * kvDim;
            if (keys16 == null) {
                System.arraycopy(k, 0, keys, o, n);
                System.arraycopy(v, 0, values, o, n);
                return;
            }
            for (int i = 0; i < n; i++) {
                keys16[o + i] = Floats.floatToF16(k[i]);
                values16[o + i] = Floats.floatToF16(v[i]);
            }
        }
    }
}
