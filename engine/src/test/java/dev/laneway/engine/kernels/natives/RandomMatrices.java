package dev.laneway.engine.kernels.natives;

import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.LayerShape;
import dev.laneway.engine.kernels.LayerWeights;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.Matrix.Layout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import java.util.Random;

/**
 * Random weight matrices in every layout, in direct buffers like memory-mapped weights. Tiles are random bytes (any
 * bytes are a valid tile; {@code Tiles.decodeRow} defines what they mean) with small random bf16 scales, so padding rows
 * and columns hold garbage that the kernels must ignore.
 */
public final class RandomMatrices {
    private RandomMatrices() {
    }

    public static Matrix create(Layout layout, int rows, int cols, Random random) {
        // 64-byte aligned, as tensors are in a container (and memory-mapped files are page-aligned).
        int size = Math.toIntExact(layout.bytes(rows, cols));
        ByteBuffer data = ByteBuffer.allocateDirect(size + 128).alignedSlice(64).slice(0, size)
                .order(ByteOrder.LITTLE_ENDIAN);
        switch (layout) {
            case F32 -> {
                while (data.hasRemaining()) {
                    data.putFloat((float) random.nextGaussian());
                }
            }
            case F16 -> {
                while (data.hasRemaining()) {
                    data.putShort(Floats.floatToF16((float) random.nextGaussian()));
                }
            }
            case BF16 -> {
                while (data.hasRemaining()) {
                    data.putShort(Floats.floatToBf16((float) random.nextGaussian()));
                }
            }
            case TILES_Q8, TILES_Q4_1, TILES_Q4_K -> {
                byte[] bytes = new byte[data.capacity()];
                random.nextBytes(bytes);
                data.put(bytes);
                for (int t = 0; t < bytes.length / layout.tileBytes(); t++) {
                    writeScales(layout, data, t * layout.tileBytes(), random);
                }
            }
        }
        return new Matrix("w", layout, rows, cols, data.flip());
    }

    /** Replaces a tile's random scale bytes with small bf16 values (negative too, except where unsigned). */
    private static void writeScales(Layout layout, ByteBuffer d, int base, Random random) {
        switch (layout) {
            case TILES_Q8 -> {
                for (int i = 0; i < 256; i++) {
                    d.putShort(base + 2 * i, bf16(random, 0.02f));
                }
            }
            case TILES_Q4_1 -> {
                for (int i = 0; i < 256; i++) {
                    d.putShort(base + 2 * i, bf16(random, 0.1f));
                    d.putShort(base + 512 + 2 * i, bf16(random, 0.8f));
                }
            }
            case TILES_Q4_K -> {
                for (int r = 0; r < 32; r++) {
                    d.putShort(base + 4608 + 2 * r, bf16(random, 0.002f));
                    d.putShort(base + 4672 + 2 * r, bf16(random, 0.01f));
                }
            }
            default -> throw new IllegalArgumentException(layout + " is not tiled");
        }
    }

    private static short bf16(Random random, float scale) {
        return Floats.floatToBf16((float) (random.nextGaussian() * scale));
    }

    /**
     * The magnitude of weight (r, c) for error bounds: the sum of the absolute values of the terms it is made of
     * ({@code |code·scale| + |zero|} for q4_1), so cancellation between terms cannot hide rounding.
     */
    static float magnitude(Matrix m, int r, int c) {
        ByteBuffer d = m.data();
        if (!m.layout().tiled()) {
            long i = (long) r * m.cols() + c;
            return switch (m.layout()) {
                case F32 -> Math.abs(d.getFloat((int) (i * 4)));
                case F16 -> Math.abs(Floats.f16ToFloat(d.getShort((int) (i * 2))));
                default -> Math.abs(Floats.bf16ToFloat(d.getShort((int) (i * 2))));
            };
        }
        int base = (int) m.tileOffset(r / 32, c / 256);
        int rr = r % 32;
        int cc = c % 256;
        int i = (cc / 32) * 32 + rr;
        return switch (m.layout()) {
            case TILES_Q8 -> Math.abs(Floats.bf16ToFloat(d.getShort(base + 2 * i)) * d.get(base + 512 + cc * 32 + rr));
            case TILES_Q4_1 -> {
                int b = d.get(base + 1024 + ((rr / 16) * 8 + cc / 32) * 256 + 8 * (cc % 32) + (rr % 16) / 2) & 0xff;
                int code = rr % 2 == 0 ? b & 15 : b >>> 4;
                yield Math.abs(code * Floats.bf16ToFloat(d.getShort(base + 2 * i)))
                        + Math.abs(Floats.bf16ToFloat(d.getShort(base + 512 + 2 * i)));
            }
            default -> {
                int b = d.get(base + 512 + cc * 16 + rr / 2) & 0xff;
                int code = rr % 2 == 0 ? b & 15 : b >>> 4;
                float bigS = Floats.bf16ToFloat(d.getShort(base + 4608 + 2 * rr));
                float bigM = Floats.bf16ToFloat(d.getShort(base + 4672 + 2 * rr));
                yield Math.abs(bigS * (d.get(base + i) & 0xff) * code) + Math.abs(bigM * (d.get(base + 256 + i) & 0xff));
            }
        };
    }

    public static float[] gaussian(int n, Random random) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) random.nextGaussian();
        }
        return a;
    }

    /** A llama layer of the given shape with random weights in {@code layout} and norm weights near 1. */
    public static LayerWeights layer(Layout layout, LayerShape shape, Random random) {
        int hidden = shape.hidden();
        int q = shape.attention().qDim();
        int kv = shape.attention().kvDim();
        return new LayerWeights(norm(hidden, random), create(layout, q, hidden, random),
                create(layout, kv, hidden, random), create(layout, kv, hidden, random), Optional.empty(),
                Optional.empty(), create(layout, hidden, q, random), norm(hidden, random),
                create(layout, shape.ffn(), hidden, random), create(layout, shape.ffn(), hidden, random),
                create(layout, hidden, shape.ffn(), random));
    }

    private static float[] norm(int n, Random random) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = 1 + 0.1f * (float) random.nextGaussian();
        }
        return w;
    }
}
