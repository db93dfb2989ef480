package dev.laneway.engine.gguf;

/** {@code gguf_metadata_value_type}: the types a GGUF metadata value can have. */
enum GgufValueType {
    UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64;

    static GgufValueType of(int id) {
        GgufValueType[] all = values();
        return id >= 0 && id < all.length ? all[id] : null;
    }

    /** Bytes of one value, or 0 for strings and arrays, whose size is in the file. */
    int fixedBytes() {
        return switch (this) {
            case UINT8, INT8, BOOL -> 1;
            case UINT16, INT16 -> 2;
            case UINT32, INT32, FLOAT32 -> 4;
            case UINT64, INT64, FLOAT64 -> 8;
            case STRING, ARRAY -> 0;
        };
    }
}
