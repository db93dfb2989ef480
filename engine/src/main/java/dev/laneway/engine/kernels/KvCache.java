package dev.laneway.engine.kernels;

import java.util.concurrent.CompletableFuture;

/**
 * Keys and values of past positions for every layer, for one or more sequences (slots): per layer,
 * [slot][position][kvDim] keys and values. They are kept in half precision by default, as llama.cpp keeps them (half the memory and bandwidth, and
 * attention numerics that agree with it), in single precision, or at eight bits in llama.cpp's {@code q8_0} blocks (a
 * half-precision step and 32 signed codes per 32 elements of a row, 34 bytes: a quarter of the memory of single
 * precision, and what {@code -ctk q8_0 -ctv q8_0} keeps, each head's keys and values first rotated as llama.cpp rotates
 * them, {@link Hadamard}).
 *
 * <p>A cache made {@link #onDemand} holds room for the positions used so far and grows as a generation reaches past
 * them (doubling, up to the context length), so that a model's full context costs neither memory nor the time of
 * clearing it until a conversation is that long: the 1B shape's 4096 positions are 128 MiB per stream.
 */
public final class KvCache {
    /** How keys and values are stored. */
    public enum Precision {
        F16, F32, Q8;

        /** Bytes of {@code elements} elements of a row (a whole number of blocks at eight bits). */
        public long bytes(long elements) {
            return switch (this) {
                case F16 -> 2 * elements;
                case F32 -> 4 * elements;
                case Q8 -> elements / Q8_BLOCK * Q8_BLOCK_BYTES;
            };
        }
    }

    /** A row of keys or values rotated before an eight-bit cache keeps it ({@link Hadamard}). */
    private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

    /** Elements of a row that share one step in an eight-bit cache. */
    public static final int Q8_BLOCK = 32;
    /** Bytes of such a block: its half-precision step, then its 32 codes. */
    public static final int Q8_BLOCK_BYTES = 34;

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

    /** A cache of one slot with room for the whole context, its rows one head of {@code kvDim}. */
    public KvCache(int layers, int contextLength, int kvDim, Precision precision) {
        this(layers, contextLength, kvDim, kvDim, precision);
    }

    /** A cache of one slot with room for the whole context, its rows heads of {@code headDim}. */
    public KvCache(int layers, int contextLength, int kvDim, int headDim, Precision precision) {
        this(layers, contextLength, kvDim, headDim, precision, 1, contextLength);
    }

    private KvCache(int layers, int contextLength, int kvDim, int headDim, Precision precision, int slots,
                    int room) {
        if (slots < 1) {
            throw new IllegalArgumentException("a KV cache needs at least one slot, got " + slots);
        }
        this.layers = new Layer[layers];
        this.contextLength = contextLength;
        this.kvDim = kvDim;
        this.precision = precision;
        this.slots = slots;
        if (precision == Precision.Q8 && (headDim % Q8_BLOCK != 0 || kvDim % headDim != 0)) {
            throw new IllegalArgumentException("an eight-bit KV cache needs heads of whole " + Q8_BLOCK
                    + "-element blocks, got " + headDim + " in rows of " + kvDim);
        }
        for (int l = 0; l < layers; l++) {
            this.layers[l] = new Layer(precision, kvDim, headDim, slots);
        }
        // every slot's context in one array
        Math.toIntExact(precision.bytes(Math.multiplyExact(Math.multiplyExact(contextLength, kvDim), slots)));
        if (room > 0) {
            grow(room);
        }
    }

    /** A cache of one slot that makes room for positions as {@link #reserve} asks for them (rows of one head). */
    public static KvCache onDemand(int layers, int contextLength, int kvDim, Precision precision) {
        return onDemand(layers, contextLength, kvDim, precision, 1);
    }

    /** A cache of {@code slots} sequences, rows of one head, that makes room for positions as asked. */
    public static KvCache onDemand(int layers, int contextLength, int kvDim, Precision precision, int slots) {
        return onDemand(layers, contextLength, kvDim, kvDim, precision, slots);
    }

    /**
     * A cache of {@code slots} sequences whose rows are heads of {@code headDim}, that makes room for positions as
     * {@link #reserve} asks for them.
     */
    public static KvCache onDemand(int layers, int contextLength, int kvDim, int headDim, Precision precision,
                                   int slots) {
        return new KvCache(layers, contextLength, kvDim, headDim, precision, slots, 0);
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
            arrays[l] = switch (precision) {
                case F16 -> new Object[] {new short[(int) elements], new short[(int) elements]};
                case F32 -> new Object[] {new float[(int) elements], new float[(int) elements]};
                case Q8 -> new Object[] {new byte[Math.toIntExact(precision.bytes(elements))],
                        new byte[Math.toIntExact(precision.bytes(elements))]};
            };
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
        return 2L * layers * positions * precision.bytes(kvDim);
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
     * One layer's cache, [slot][room][kvDim]: float arrays in single precision, half-precision bits, or eight-bit
     * blocks (bytes; element e of the arrays at byte {@link #index index(e)}); a slot's positions begin at element
     * {@link #base(int)}.
     */
    public static final class Layer {
        private float[] keys;
        private float[] values;
        private short[] keys16;
        private short[] values16;
        private byte[] keys8;
        private byte[] values8;
        private final Precision precision;
        private final int kvDim;
        private final int headDim;
        private final int slots;
        private int room;

        Layer(Precision precision, int kvDim, int headDim, int slots) {
            switch (precision) {
                case F16 -> {
                    keys16 = new short[0];
                    values16 = new short[0];
                }
                case F32 -> {
                    keys = new float[0];
                    values = new float[0];
                }
                case Q8 -> {
                    keys8 = new byte[0];
                    values8 = new byte[0];
                }
            }
            this.precision = precision;
            this.kvDim = kvDim;
            this.headDim = headDim;
            this.slots = slots;
        }

        /**
         * Takes {@code arrays} (empty keys and values of {@code positions} per slot) as this layer's, each slot's
         * stored positions copied to its new place.
         */
        private void adopt(Object[] arrays, int positions) {
            int was = index(room * kvDim);
            int now = index(positions * kvDim);
            switch (precision) {
                case F16 -> {
                    keys16 = moved(keys16, (short[]) arrays[0], was, now);
                    values16 = moved(values16, (short[]) arrays[1], was, now);
                }
                case F32 -> {
                    keys = moved(keys, (float[]) arrays[0], was, now);
                    values = moved(values, (float[]) arrays[1], was, now);
                }
                case Q8 -> {
                    keys8 = moved(keys8, (byte[]) arrays[0], was, now);
                    values8 = moved(values8, (byte[]) arrays[1], was, now);
                }
            }
            room = positions;
        }

        /** {@code grown}, holding each slot's {@code was} entries of {@code old} at the start of its {@code now}. */
        private <T> T moved(T old, T grown, int was, int now) {
            for (int s = 0; s < slots; s++) {
                System.arraycopy(old, s * was, grown, s * now, was);
            }
            return grown;
        }

        public Precision precision() {
            return precision;
        }

        /** Whether keys and values are half precision ({@link #keys16()}, {@link #values16()}). */
        public boolean f16() {
            return precision == Precision.F16;
        }

        /** Single-precision keys, [slot][position][kvDim]; null for another precision. */
        public float[] keys() {
            return keys;
        }

        /** Single-precision values, [slot][position][kvDim]; null for another precision. */
        public float[] values() {
            return values;
        }

        /** Half-precision key bits, [slot][position][kvDim]; null for another precision. */
        public short[] keys16() {
            return keys16;
        }

        /** Half-precision value bits, [slot][position][kvDim]; null for another precision. */
        public short[] values16() {
            return values16;
        }

        /** Eight-bit key blocks, [slot][position][kvDim / 32]; null for another precision. */
        public byte[] keys8() {
            return keys8;
        }

        /** Eight-bit value blocks, [slot][position][kvDim / 32]; null for another precision. */
        public byte[] values8() {
            return values8;
        }

        /** The keys' array, whichever the precision: for copying positions as they are stored. */
        public Object keyArray() {
            return switch (precision) {
                case F16 -> keys16;
                case F32 -> keys;
                case Q8 -> keys8;
            };
        }

        /** The values' array, whichever the precision. */
        public Object valueArray() {
            return switch (precision) {
                case F16 -> values16;
                case F32 -> values;
                case Q8 -> values8;
            };
        }

        /** The index in {@link #keyArray()} of element {@code e} (a whole number of rows, or of blocks at 8 bits). */
        public int index(int e) {
            return precision == Precision.Q8 ? e / Q8_BLOCK * Q8_BLOCK_BYTES : e;
        }

        public int kvDim() {
            return kvDim;
        }

        public int headDim() {
            return headDim;
        }

        /**
         * The piece of a head that keys (and queries) are rotated in before an eight-bit cache keeps them
         * ({@link Hadamard}; 0: none, as in every other precision).
         */
        public int keyRotation() {
            return precision == Precision.Q8 ? Hadamard.keys(headDim) : 0;
        }

        /** The piece values are rotated in before an eight-bit cache keeps them (0: none). */
        public int valueRotation() {
            return precision == Precision.Q8 ? Hadamard.values(headDim) : 0;
        }

        /** Elements the arrays hold: every slot's room. */
        public long elements() {
            return (long) slots * room * kvDim;
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
            int n = index(kvDim);
            for (int p = keep + discard; p < used; p++) {
                int src = base(slot) + p * kvDim;
                int dst = src - discard * kvDim;
                System.arraycopy(valueArray(), index(src), valueArray(), index(dst), n);
                readKeys(src, row);
                turn(row, rope, cos, sin);
                writeKeys(row, dst);
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
            int src = index(base(source) + from * kvDim);
            int dst = index(base(target) + from * kvDim);
            int n = index((to - from) * kvDim);
            System.arraycopy(keyArray(), src, keyArray(), dst, n);
            System.arraycopy(valueArray(), src, valueArray(), dst, n);
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
            switch (precision) {
                case F32 -> {
                    System.arraycopy(k, from, keys, o, n);
                    System.arraycopy(v, from, values, o, n);
                }
                case F16 -> {
                    for (int i = 0; i < n; i++) {
                        keys16[o + i] = Floats.floatToF16(k[from + i]);
                        values16[o + i] = Floats.floatToF16(v[from + i]);
                    }
                }
                case Q8 -> {
                    float[] row = ROW.get();
                    if (row.length < kvDim) {
                        row = new float[kvDim];
                        ROW.set(row);
                    }
                    for (int r = 0; r < rows; r++) {
                        System.arraycopy(k, from + r * kvDim, row, 0, kvDim);
                        Hadamard.rotate(row, 0, kvDim, keyRotation());
                        quantizeRow(row, keys8, index(o + r * kvDim));
                        System.arraycopy(v, from + r * kvDim, row, 0, kvDim);
                        Hadamard.rotate(row, 0, kvDim, valueRotation());
                        quantizeRow(row, values8, index(o + r * kvDim));
                    }
                }
            }
        }

        /** The first kvDim elements of {@code row} as blocks at {@code blocks[at]}. */
        private void quantizeRow(float[] row, byte[] blocks, int at) {
            for (int b = 0; b < kvDim; b += Q8_BLOCK) {
                quantizeBlock(row, b, blocks, at + index(b));
            }
        }

        /** The values of whole rows from element {@code e} (a row's first), as numbers, into {@code out}. */
        public void readValues(int e, float[] out) {
            read(valueArray(), valueRotation(), e, out);
        }

        /** The keys of whole rows from element {@code e} (a row's first), as numbers, into {@code out}. */
        public void readKeys(int e, float[] out) {
            read(keyArray(), keyRotation(), e, out);
        }

        private void read(Object array, int rotation, int e, float[] out) {
            switch (precision) {
                case F32 -> System.arraycopy(array, e, out, 0, out.length);
                case F16 -> {
                    for (int i = 0; i < out.length; i++) {
                        out[i] = Floats.f16ToFloat(((short[]) array)[e + i]);
                    }
                }
                case Q8 -> {
                    for (int i = 0; i < out.length; i++) {
                        out[i] = element((byte[]) array, e + i);
                    }
                    Hadamard.rotate(out, 0, out.length, rotation);
                }
            }
        }

        /** {@code row}, as stored, into the keys of elements {@code e .. e + row.length}. */
        private void writeKeys(float[] row, int e) {
            switch (precision) {
                case F32 -> System.arraycopy(row, 0, keys, e, row.length);
                case F16 -> {
                    for (int i = 0; i < row.length; i++) {
                        keys16[e + i] = Floats.floatToF16(row[i]);
                    }
                }
                case Q8 -> {
                    Hadamard.rotate(row, 0, row.length, keyRotation());
                    quantizeRow(row, keys8, index(e));
                }
            }
        }
    }

    /**
     * Writes {@code x[from .. from + 32]} as a {@code q8_0} block at {@code blocks[at]}, as llama.cpp's x86 quantizer
     * writes it: the step is the largest magnitude over 127, kept in half precision, and each code is
     * x · 127 / largest rounded to the nearest, ties to even.
     */
    public static void quantizeBlock(float[] x, int from, byte[] blocks, int at) {
        float amax = 0f;
        for (int i = 0; i < Q8_BLOCK; i++) {
            amax = Math.max(amax, Math.abs(x[from + i]));
        }
        float id = amax != 0f ? 127f / amax : 0f;
        short h = Floats.floatToF16(amax / 127f);
        blocks[at] = (byte) h;
        blocks[at + 1] = (byte) (h >> 8);
        for (int i = 0; i < Q8_BLOCK; i++) {
            blocks[at + 2 + i] = (byte) Math.rint(x[from + i] * id);
        }
    }

    /** Element {@code e} of eight-bit blocks, as a number. */
    private static float element(byte[] blocks, int e) {
        int at = e / Q8_BLOCK * Q8_BLOCK_BYTES;
        return step(blocks, at) * blocks[at + 2 + e % Q8_BLOCK];
    }

    /** The step of the block at {@code blocks[at]}. */
    public static float step(byte[] blocks, int at) {
        return Floats.f16ToFloat((short) ((blocks[at] & 0xff) | (blocks[at + 1] << 8)));
    }
}
