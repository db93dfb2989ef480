package dev.laneway.engine.quant;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.kernels.Matrix.Layout;

/**
 * Re-packs ggml blocks into tiles without requantizing: the 4- or 8-bit codes are copied as they are, and only the
 * block scales change type, from f16 (or f16 products) to bf16. The conversions:
 * <ul>
 *   <li>Q4_0 → q4_1: scale = d, zero = −8·d (x = (q − 8)·d);</li>
 *   <li>Q4_1 → q4_1: scale = d, zero = m;</li>
 *   <li>Q4_K → q4_1: per 32-column sub-block, scale = d·sc, zero = −dmin·m;</li>
 *   <li>Q4_K → Q4_K tiles: scale = sc, min = m, S[r] = d, M[r] = −dmin (one super-block per tile row);</li>
 *   <li>Q8_0 → Q8: d = d.</li>
 * </ul>
 * Each weight then differs from the ggml value only by the bf16 rounding of its scale and zero.
 */
final class BlockTileConverter {
    private BlockTileConverter() {
    }

    /** Whether {@code source} blocks convert exactly into {@code target} tiles. */
    static boolean converts(DType source, Layout target) {
        return switch (target) {
            case TILES_Q4_1 -> source == DType.Q4_0 || source == DType.Q4_1 || source == DType.Q4_K;
            case TILES_Q4_K -> source == DType.Q4_K;
            case TILES_Q8 -> source == DType.Q8_0;
            default -> false;
        };
    }

    /**
     * Writes one row's blocks ({@code raw}, {@code cols} elements) as row {@code r} of a band of tiles in
     * {@code out}, which must start zeroed.
     */
    static void row(DType source, Layout target, byte[] raw, int cols, int r, byte[] out) {
        int blocks = cols / source.blockSize();
        for (int b = 0; b < blocks; b++) {
            int o = b * source.blockBytes();
            switch (source) {
                case Q4_0, Q4_1 -> q4Block(source, raw, o, b, r, out);
                case Q4_K -> {
                    if (target == Layout.TILES_Q4_K) {
                        q4KToQ4K(raw, o, b, r, out);
                    } else {
                        q4KToQ4_1(raw, o, b, r, out);
                    }
                }
                case Q8_0 -> q8Block(raw, o, b, r, out);
                default -> throw new IllegalArgumentException("no exact conversion from " + source + " to " + target);
            }
        }
    }

    /** Block b of a row is group b % 8 of tile b / 8. */
    private static void q4Block(DType source, byte[] raw, int o, int b, int r, byte[] out) {
        float d = GgmlBlocks.f16(raw, o);
        float zero = source == DType.Q4_0 ? -8 * d : GgmlBlocks.f16(raw, o + 2);
        int qs = o + (source == DType.Q4_0 ? 2 : 4);
        int base = (b / 8) * Layout.TILES_Q4_1.tileBytes();
        int g = b % 8;
        TileBytes.q4_1Params(out, base, r, g, TileBytes.bf16(d), TileBytes.bf16(zero));
        for (int l = 0; l < 16; l++) {
            int q = raw[qs + l] & 0xff;
            TileBytes.q4_1Code(out, base, r, g * 32 + l, q & 0x0f);
            TileBytes.q4_1Code(out, base, r, g * 32 + l + 16, q >>> 4);
        }
    }

    /** Super-block b of a row is tile b; its sub-block g is the tile's group g. */
    private static void q4KToQ4_1(byte[] raw, int o, int b, int r, byte[] out) {
        float d = GgmlBlocks.f16(raw, o);
        float dmin = GgmlBlocks.f16(raw, o + 2);
        int base = b * Layout.TILES_Q4_1.tileBytes();
        for (int g = 0; g < 8; g++) {
            int sm = GgmlBlocks.scaleMinK4(raw, o + 4, g);
            float scale = d * (sm & 0xff);
            float zero = -(dmin * (sm >>> 8));
            TileBytes.q4_1Params(out, base, r, g, TileBytes.bf16(scale), TileBytes.bf16(zero));
            int qs = o + 16 + (g / 2) * 32;
            int shift = (g % 2) * 4;
            for (int l = 0; l < 32; l++) {
                TileBytes.q4_1Code(out, base, r, g * 32 + l, (raw[qs + l] >>> shift) & 0x0f);
            }
        }
    }

    private static void q4KToQ4K(byte[] raw, int o, int b, int r, byte[] out) {
        float d = GgmlBlocks.f16(raw, o);
        float dmin = GgmlBlocks.f16(raw, o + 2);
        int base = b * Layout.TILES_Q4_K.tileBytes();
        TileBytes.q4KRow(out, base, r, TileBytes.bf16(d), TileBytes.bf16(-dmin));
        for (int g = 0; g < 8; g++) {
            int sm = GgmlBlocks.scaleMinK4(raw, o + 4, g);
            TileBytes.q4KScaleMin(out, base, r, g, sm & 0xff, sm >>> 8);
            int qs = o + 16 + (g / 2) * 32;
            int shift = (g % 2) * 4;
            for (int l = 0; l < 32; l++) {
                TileBytes.q4KCode(out, base, r, g * 32 + l, (raw[qs + l] >>> shift) & 0x0f);
            }
        }
    }

    private static void q8Block(byte[] raw, int o, int b, int r, byte[] out) {
        int base = (b / 8) * Layout.TILES_Q8.tileBytes();
        int g = b % 8;
        TileBytes.q8Scale(out, base, r, g, TileBytes.bf16(GgmlBlocks.f16(raw, o)));
        for (int l = 0; l < 32; l++) {
            TileBytes.q8Code(out, base, r, g * 32 + l, raw[o + 2 + l]);
        }
    }
}
