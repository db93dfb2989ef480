package dev.laneway.engine.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Builds little-endian byte sequences by hand, for crafting model files in tests. */
public final class LeBytes {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    public LeBytes u8(int v) {
        out.write(v);
        return this;
    }

    public LeBytes u16(int v) {
        return u8(v).u8(v >>> 8);
    }

    public LeBytes u32(long v) {
        return u16((int) v).u16((int) (v >>> 16));
    }

    public LeBytes u64(long v) {
        return u32(v).u32(v >>> 32);
    }

    public LeBytes f32(float v) {
        return u32(Float.floatToRawIntBits(v));
    }

    public LeBytes f64(double v) {
        return u64(Double.doubleToRawLongBits(v));
    }

    /** A GGUF string: u64 length, then UTF-8 bytes. */
    public LeBytes str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return u64(b.length).raw(b);
    }

    public LeBytes raw(byte[] b) {
        out.write(b, 0, b.length);
        return this;
    }

    public LeBytes zeros(int n) {
        return raw(new byte[n]);
    }

    /** Zero bytes up to the next multiple of {@code alignment}. */
    public LeBytes align(int alignment) {
        while (out.size() % alignment != 0) {
            out.write(0);
        }
        return this;
    }

    public int size() {
        return out.size();
    }

    public byte[] bytes() {
        return out.toByteArray();
    }
}
