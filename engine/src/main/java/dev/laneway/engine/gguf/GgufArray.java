package dev.laneway.engine.gguf;

import java.lang.reflect.Array;

/**
 * A metadata array. {@code values} is a primitive array for numbers and booleans ({@code int[]} for 8-, 16- and
 * 32-bit signed and 8- and 16-bit unsigned integers, {@code long[]} for unsigned 32-bit and 64-bit ones,
 * {@code float[]}, {@code double[]}, {@code boolean[]}), a {@code String[]} for strings, and a {@code GgufArray[]} for
 * arrays of arrays.
 *
 * @param elementType the GGUF type of the elements, by name (e.g. {@code STRING})
 * @param values      the elements
 */
public record GgufArray(String elementType, Object values) {

    /** The number of elements. */
    public int length() {
        return Array.getLength(values);
    }
}
