package dev.laneway.engine.gguf;

import dev.laneway.engine.format.FormatException;

import java.io.IOException;

/**
 * Reads metadata values. Java types: {@code Integer} for 8-, 16- and 32-bit signed and 8- and 16-bit unsigned
 * integers, {@code Long} for unsigned 32-bit and all 64-bit integers (unsigned 64-bit values keep their bits),
 * {@code Float}, {@code Double}, {@code Boolean}, {@code String}, and {@link GgufArray}.
 */
final class GgufValues {
    /** Arrays nest at most this deep; deeper nesting is treated as corruption. */
    private static final int MAX_DEPTH = 4;

    private GgufValues() {
    }

    static Object read(GgufReader in, int typeId, String key, int depth) throws IOException {
        long at = in.position();
        GgufValueType type = GgufValueType.of(typeId);
        if (type == null) {
            throw new FormatException(in.file(), at, "metadata " + key + " has unknown value type " + typeId);
        }
        return switch (type) {
            case UINT8 -> in.i8(key) & 0xff;
            case INT8 -> (int) in.i8(key);
            case UINT16 -> in.i16(key) & 0xffff;
            case INT16 -> (int) in.i16(key);
            case UINT32 -> in.i32(key) & 0xffffffffL;
            case INT32 -> in.i32(key);
            case FLOAT32 -> in.f32(key);
            case BOOL -> bool(in, key, at);
            case STRING -> in.string(key);
            case UINT64, INT64 -> in.i64(key);
            case FLOAT64 -> in.f64(key);
            case ARRAY -> array(in, key, depth);
        };
    }

    private static boolean bool(GgufReader in, String key, long at) throws IOException {
        byte b = in.i8(key);
        if (b != 0 && b != 1) {
            throw new FormatException(in.file(), at, "metadata " + key + " is a bool of value " + b + ", expected 0 or 1");
        }
        return b == 1;
    }

    private static GgufArray array(GgufReader in, String key, int depth) throws IOException {
        long at = in.position();
        if (depth >= MAX_DEPTH) {
            throw new FormatException(in.file(), at, "metadata " + key + " nests arrays deeper than " + MAX_DEPTH);
        }
        int elemTypeId = in.i32(key + " element type");
        GgufValueType elem = GgufValueType.of(elemTypeId);
        if (elem == null) {
            throw new FormatException(in.file(), at, "metadata " + key + " is an array of unknown type " + elemTypeId);
        }
        long count = in.i64(key + " element count");
        // Strings take at least their 8-byte length, arrays their 12-byte header.
        long minBytes = elem.fixedBytes() > 0 ? elem.fixedBytes() : elem == GgufValueType.STRING ? 8 : 12;
        if (count < 0 || count > Integer.MAX_VALUE - 8 || count * minBytes > in.remaining()) {
            throw new FormatException(in.file(), at, "truncated: metadata " + key + " claims "
                    + Long.toUnsignedString(count) + " elements of type " + elem + ", the file has " + in.remaining()
                    + " bytes left");
        }
        int n = (int) count;
        Object values = switch (elem) {
            case UINT8, INT8, UINT16, INT16, INT32 -> {
                int[] v = new int[n];
                for (int i = 0; i < n; i++) {
                    v[i] = ((Number) read(in, elemTypeId, key, depth + 1)).intValue();
                }
                yield v;
            }
            case UINT32, UINT64, INT64 -> {
                long[] v = new long[n];
                for (int i = 0; i < n; i++) {
                    v[i] = ((Number) read(in, elemTypeId, key, depth + 1)).longValue();
                }
                yield v;
            }
            case FLOAT32 -> {
                float[] v = new float[n];
                for (int i = 0; i < n; i++) {
                    v[i] = in.f32(key);
                }
                yield v;
            }
            case FLOAT64 -> {
                double[] v = new double[n];
                for (int i = 0; i < n; i++) {
                    v[i] = in.f64(key);
                }
                yield v;
            }
            case BOOL -> {
                boolean[] v = new boolean[n];
                for (int i = 0; i < n; i++) {
                    v[i] = bool(in, key, in.position());
                }
                yield v;
            }
            case STRING -> {
                String[] v = new String[n];
                for (int i = 0; i < n; i++) {
                    v[i] = in.string(key + "[" + i + "]");
                }
                yield v;
            }
            case ARRAY -> {
                GgufArray[] v = new GgufArray[n];
                for (int i = 0; i < n; i++) {
                    v[i] = array(in, key + "[" + i + "]", depth + 1);
                }
                yield v;
            }
        };
        return new GgufArray(elem.name(), values);
    }
}
