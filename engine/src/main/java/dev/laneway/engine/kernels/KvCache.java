package dev.laneway.engine.kernels;

import java.util.concurrent.CompletableFuture;

/**
 * Keys and values of past positions for every layer, for one or more sequences (slots): per layer,
 * [slot][position][kvDim] keys and values. They are kept in half precision by default, as llama.cpp keeps them (half the memory and bandwidth, and
 * attention numerics that agree with it), or in single precision.
 *
 * <p>A cache made {@link #onDemand} holds room for the positions used so far and grows as a generation reaches past
 * them (doubling, up to the context length), so that a model's full context costs neither memory nor the time of
 * clearing it until a conversation is that long: the 1B shape's 4096 positions are 128 MiB per stream.
 */
public final class KvCache {
    /** How keys and values are stored. */
    public enum Precision { F16, F32 }

    /** The fewest positions an on-demand cache makes room for. */
    static final int FIRST_ROOM = 256;

    private final Layer[] layers;
    private final int contextLength;
    private final int kvDim;
    private final Precision precision;
    private final int slots;
    private int room;
    /** The arrays of the next growth, when they are being allocated ahead of it. */
    private NextArrays next;

    /** Allocates the next arrays of every on-demand cache: one thread, which never holds the JVM open. */
    private static final java.util.concurrent.Executor ALLOCATOR = java.util.concurrent.Executors
            .newSingleThreadExecutor(task -> {
                Thread t = new Thread(task, "kv-cache-allocator");
                t.setDaemon(true);
                return t;
            });

    /** A single-precision cache of one slot with room for the whole context. */
    public KvCache(int layers, int contextLength, int kvDim) {
        this(layers, contextLength, kvDim, Precision.F32);
    }

    /** A cache of one slot with room for the whole context. */
    public KvCache(int layers, int contextLength, int kvDim, Precision precision) {
        this(layers, contextLength, kvDim, precision, 1, contextLength);
    }

    private KvCache(int layers, int contextLength, int kvDim, Precision precision, int slots, int room) {
        if (slots < 1) {
            throw new IllegalArgumentException("a KV cache needs at least one slot, got " + slots);
        }
        this.layers = new Layer[layers];
        this.contextLength = contextLength;
        this.kvDim = kvDim;
        this.precision = precision;
        this.slots = slots;
        for (int l = 0; l < layers; l++) {
            this.layers[l] = new Layer(precision, kvDim, slots);
        }
        Math.multiplyExact(Math.multiplyExact(contextLength, kvDim), slots);  // every slot's context in one array
        if (room > 0) {
            grow(room);
        }
    }

    /** A cache of one slot that makes room for positions as {@link #reserve} asks for them. */
    public static KvCache onDemand(int layers, int contextLength, int kvDim, Precision precision) {
        return onDemand(layers, contextLength, kvDim, precision, 1);
    }

    /** A cache of {@code slots} sequences that makes room for positions as {@link #reserve} asks for them. */
    public static KvCache onDemand(int layers, int contextLength, int kvDim, Precision precision, int slots) {
        return new KvCache(layers, contextLength, kvDim, precision, slots, 0);
    }

    /**
     * Makes room for positions {@code 0 .. positions - 1} in every layer, keeping what is stored; the arrays of
     * {@link Layer} are replaced when they grow. Once the positions asked for pass three quarters of the room, the
     * arrays of the next size are allocated on another thread, so that the growth itself is only the copy: allocating
     * (and so clearing) every slot's next arrays at once took seconds for several streams of a 1B model, in which
     * every running sequence waited.
     */
    public void reserve(int positions) {
        if (positions > contextLength) {
            throw new IllegalArgumentException(positions + " positions exceed the context of " + contextLength);
        }
        if (positions > room) {
            grow((int) Math.min(contextLength, Math.max(positions, Math.max(FIRST_ROOM, 2L * room))));
        }
        if (next == null && room < contextLength && positions > room - room / 4) {
            int size = (int) Math.min(contextLength, Math.max(FIRST_ROOM, 2L * room));
            next = new NextArrays(size, CompletableFuture.supplyAsync(() -> allocate(size), ALLOCATOR));
        }
    }

    private void grow(int positions) {
        Object[][] arrays = null;
        if (next != null && next.room == positions) {
            try {
                arrays = next.arrays.join();
            } catch (java.util.concurrent.CompletionException e) {
                // Allocated ahead or not, the growth needs the memory: allocating again now reports its lack below.
            }
        }
        next = null;
        try {
            if (arrays == null) {
                arrays = allocate(positions);
            }
            for (int l = 0; l < layers.length; l++) {
                layers[l].adopt(arrays[l], positions);
            }
        } catch (OutOfMemoryError e) {
            throw new IllegalStateException("not enough memory for a KV cache of " + positions + " positions ("
                    + bytesFor(positions) / (1 << 20) + " MiB); lower --opt ctx or --streams, or give the JVM more"
                    + " heap (-Xmx)");
        }
        room = positions;
    }

    /** Every layer's keys and values arrays for {@code positions} positions per slot, empty. */
    private Object[][] allocate(int positions) {
        Object[][] arrays = new Object[layers.length][];
        long elements = (long) slots * positions * kvDim;
        for (int l = 0; l < layers.length; l++) {
            arrays[l] = precision == Precision.F16 ? new Object[] {new short[(int) elements], new short[(int) elements]}
                    : new Object[] {new float[(int) elements], new float[(int) elements]};
        }
        return arrays;
    }

    /** The arrays of the next growth, being allocated, and the positions per slot they hold. */
    private record NextArrays(int room, CompletableFuture<Object[][]> arrays) {
    }

    /** Bytes of keys and values for {@code positions} positions of every slot in every layer. */
    public long bytesFor(int positions) {
        return slots * bytes(layers.length, positions, kvDim, precision);
    }

    static long bytes(int layers, int positions, int kvDim, Precision precision) {
        return 2L * layers * positions * kvDim * (precision == Precision.F16 ? Short.BYTES : Float.BYTES);
    }

    /**
     * Refuses, when a model is opened, {@code streams} on-demand caches that could not all grow to the whole context
     * in {@code heapLeft} bytes, as caches made whole at once would have failed then: a server that starts can hold
     * its longest conversations.
     *
     * @throws IllegalArgumentException naming what they need and what there is
     */
    public static void requireHeap(int streams, int layers, int contextLength, int kvDim, Precision precision,
                                   long heapLeft) {
        long need = streams * bytes(layers, contextLength, kvDim, precision);
        if (need > heapLeft) {
            throw new IllegalArgumentException("the KV caches of " + streams + " stream(s) at the full context of "
                    + contextLength + " positions need " + need / (1 << 20) + " MiB, more than the "
                    + heapLeft / (1 << 20) + " MiB of Java heap left: lower --opt ctx or --streams, or raise -Xmx");
        }
    }

    /**
     * Copies positions {@code from .. to} of slot {@code source} into the same positions of slot {@code target} in
     * every layer: a prefix one sequence computed, taken by another whose prompt begins the same way.
     */
    public void copy(int source, int target, int from, int to) {
        if (to > room || from < 0 || from > to || source == target) {
            throw new IllegalArgumentException("cannot copy positions " + from + ".." + to + " of slot " + source
                    + " to slot " + target + " (room " + room + ")");
        }
        for (Layer layer : layers) {
            layer.copy(source, target, from, to);
        }
    }

    /**
     * Drops positions {@code keep .. keep + discard} of {@code slot}, whose first {@code used} positions are filled:
     * the later ones move down into their place (llama-server's context shift), their keys turned back by
     * {@code ropes.apply(layer)} (null: that layer has no RoPE).
     */
    public void shift(int slot, int keep, int discard, int used, java.util.function.IntFunction<Rope> ropes) {
        if (keep < 0 || discard < 1 || keep + discard > used || used > room) {
            throw new IllegalArgumentException("cannot drop positions " + keep + " .. " + (keep + discard) + " of "
                    + used);
        }
        for (int l = 0; l < layers.length; l++) {
            layers[l].shift(slot, keep, discard, used, ropes.apply(l));
        }
    }

    /** Positions there is room for now. */
    public int room() {
        return room;
    }

    public Layer layer(int l) {
        return layers[l];
    }

    public int layers() {
        return layers.length;
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

    /** Sequences the cache holds. */
    public int slots() {
        return slots;
    }

    /**
     * One layer's cache: float arrays in single precision, or half-precision bits, [slot][room][kvDim]; a slot's
     * positions begin at {@link #base(int)}.
     */
    public static final class Layer {
        private float[] keys;
        private float[] values;
        private short[] keys16;
        private short[] values16;
        private final int kvDim;
        private final int slots;
        private int room;

        Layer(Precision precision, int kvDim, int slots) {
            if (precision == Precision.F16) {
                keys16 = new short[0];
                values16 = new short[0];
            } else {
                keys = new float[0];
                values = new float[0];
            }
            this.kvDim = kvDim;
            this.slots = slots;
        }

        /**
         * Takes {@code arrays} (empty keys and values of {@code positions} per slot) as this layer's, each slot's
         * stored positions copied to its new place.
         */
        private void adopt(Object[] arrays, int positions) {
            int was = room * kvDim;
            int now = positions * kvDim;
            if (keys16 != null) {
                keys16 = moved(keys16, (short[]) arrays[0], was, now);
                values16 = moved(values16, (short[]) arrays[1], was, now);
            } else {
                keys = moved(keys, (float[]) arrays[0], was, now);
                values = moved(values, (float[]) arrays[1], was, now);
            }
            room = positions;
        }

        /** {@code grown}, holding each slot's {@code was} elements of {@code old} at the start of its {@code now}. */
        private <T> T moved(T old, T grown, int was, int now) {
            for (int s = 0; s < slots; s++) {
                System.arraycopy(old, s * was, grown, s * now, was);
            }
            return grown;
        }

        /** Whether keys and values are half precision ({@link #keys16()}, {@link #values16()}). */
        public boolean f16() {
            return keys16 != null;
        }

        /** Single-precision keys, [slot][position][kvDim]; null for a half-precision cache. */
        public float[] keys() {
            return keys;
        }

        /** Single-precision values, [slot][position][kvDim]; null for a half-precision cache. */
        public float[] values() {
            return values;
        }

        /** Half-precision key bits, [slot][position][kvDim]; null for a single-precision cache. */
        public short[] keys16() {
            return keys16;
        }

        /** Half-precision value bits, [slot][position][kvDim]; null for a single-precision cache. */
        public short[] values16() {
            return values16;
        }

        public int kvDim() {
            return kvDim;
        }

        /** The element offset of a slot's position 0 in the arrays. */
        public int base(int slot) {
            return slot * room * kvDim;
        }

        /**
         * Moves positions {@code keep + discard .. used} of {@code slot} down by {@code discard}, dropping the
         * positions between, and turns each moved key back by {@code discard} positions of {@code rope} (null for a
         * layer without RoPE), so that it reads as if computed where it now stands.
         */
        void shift(int slot, int keep, int discard, int used, Rope rope) {
            float[] row = new float[kvDim];
            float[] cos = null;
            float[] sin = null;
            if (rope != null) {
                // RoPE turns by an angle linear in the position: back by discard positions is one turn by
                // -discard * frequency, whatever the scaling (its magnitude, for YaRN, divided out).
                int half = rope.rotaryDim() / 2;
                cos = new float[half];
                sin = new float[half];
                for (int i = 0; i < half; i++) {
                    double c = rope.cos()[discard * half + i];
                    double s = rope.sin()[discard * half + i];
                    double magnitude = Math.hypot(c, s);
                    cos[i] = (float) (c / magnitude);
                    sin[i] = (float) (-s / magnitude);
                }
            }
            for (int p = keep + discard; p < used; p++) {
                int src = base(slot) + p * kvDim;
                int dst = src - discard * kvDim;
                if (keys16 != null) {
                    System.arraycopy(values16, src, values16, dst, kvDim);
                    for (int i = 0; i < kvDim; i++) {
                        row[i] = Floats.f16ToFloat(keys16[src + i]);
                    }
                    turn(row, rope, cos, sin);
                    for (int i = 0; i < kvDim; i++) {
                        keys16[dst + i] = Floats.floatToF16(row[i]);
                    }
                } else {
                    System.arraycopy(values, src, values, dst, kvDim);
                    System.arraycopy(keys, src, row, 0, kvDim);
                    turn(row, rope, cos, sin);
                    System.arraycopy(row, 0, keys, dst, kvDim);
                }
            }
        }

        /** Turns each head of a key row by the angles whose cosines and sines are given. */
        private static void turn(float[] row, Rope rope, float[] cos, float[] sin) {
            if (rope == null) {
                return;
            }
            int half = rope.rotaryDim() / 2;
            for (int h = 0; h < row.length / rope.headDim(); h++) {
                int head = h * rope.headDim();
                for (int i = 0; i < half; i++) {
                    int a = rope.style() == Rope.Style.INTERLEAVED ? head + 2 * i : head + i;
                    int b = rope.style() == Rope.Style.INTERLEAVED ? a + 1 : a + rope.rotaryDim() / 2;
                    float x = row[a];
                    float y = row[b];
                    row[a] = x * cos[i] - y * sin[i];
                    row[b] = x * sin[i] + y * cos[i];
                }
            }
        }

        private void copy(int source, int target, int from, int to) {
            int src = base(source) + from * kvDim;
            int dst = base(target) + from * kvDim;
            int n = (to - from) * kvDim;
            if (keys16 != null) {
                System.arraycopy(keys16, src, keys16, dst, n);
                System.arraycopy(values16, src, values16, dst, n);
            } else {
                System.arraycopy(keys, src, keys, dst, n);
                System.arraycopy(values, src, values, dst, n);
            }
        }

        /** Stores {@code batch} rows of keys and values for positions {@code startPos ..} of slot 0. */
        public void store(float[] k, float[] v, int batch, int startPos) {
            store(k, v, 0, batch, 0, startPos);
        }

        /**
         * Stores rows {@code firstRow .. firstRow + rows} of {@code k} and {@code v} as positions {@code startPos ..}
         * of {@code slot}.
         */
        public void store(float[] k, float[] v, int firstRow, int rows, int slot, int startPos) {
            int o = base(slot) + startPos * kvDim;
            int from = firstRow * kvDim;
            int n = rows * kvDim;
            if (keys16 == null) {
                System.arraycopy(k, from, keys, o, n);
                System.arraycopy(v, from, values, o, n);
                return;
            }
            for (int i = 0; i < n; i++) {
                keys16[o + i] = Floats.floatToF16(k[from + i]);
                values16[o + i] = Floats.floatToF16(v[from + i]);
            }
        }
    }
}
