package dev.laneway.engine.kernels.natives;

import java.util.Locale;
import java.util.Optional;

/** The instruction sets the native kernels have a code path for, from the most portable up. */
public enum Isa {
    /** Plain x86-64 (SSE2): runs anywhere the library loads. */
    SCALAR("scalar"),
    /** AVX2 with FMA and F16C. */
    AVX2("avx2"),
    /** AVX-512 F/BW/VL/DQ with VNNI (int8 dot products) and VBMI (byte permutes). */
    AVX512("avx512-vnni");

    private final String label;

    Isa(String label) {
        this.label = label;
    }

    /** The name used in logs and options, e.g. {@code avx512-vnni}. */
    public String label() {
        return label;
    }

    /** The ISA named {@code text} ({@code scalar}, {@code avx2}, {@code avx512} or {@code avx512-vnni}). */
    public static Optional<Isa> parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (Isa isa : values()) {
            if (t.equals(isa.label) || t.equals(isa.name().toLowerCase(Locale.ROOT))) {
                return Optional.of(isa);
            }
        }
        return Optional.empty();
    }
}
