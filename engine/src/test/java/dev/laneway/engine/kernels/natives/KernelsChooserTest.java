package dev.laneway.engine.kernels.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.kernels.Kernels;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class KernelsChooserTest {

    @Test
    void theLibraryLoadsOnThisBuildsPlatform() {
        assertEquals(Optional.empty(), NativeCpu.loadProblem());
    }

    @Test
    void choosesTheBestNativePathByDefault() {
        Kernels kernels = KernelsChooser.choose(Optional.empty(), 2);
        try {
            NativeKernels chosen = assertInstanceOf(NativeKernels.class, kernels);
            assertEquals(NativeCpu.bestIsa(), chosen.isa());
            assertEquals("native-" + NativeCpu.bestIsa().label(), chosen.name());
            assertEquals(2, chosen.threads());
        } finally {
            ((NativeKernels) kernels).close();
        }
    }

    @Test
    void fallsBackToJavaWhenTheLibraryCannotLoad() {
        Kernels kernels = KernelsChooser.choose(Optional.empty(), 2, Optional.of("linux-riscv64: no library"));
        assertInstanceOf(JavaKernels.class, kernels);
    }

    @Test
    void refusesAnExplicitNativeChoiceThatCannotLoad() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KernelsChooser.choose(Optional.of("native"), 2, Optional.of("linux-riscv64: no library")));
        assertTrue(e.getMessage().contains("cannot load: linux-riscv64: no library"), e.getMessage());
    }

    @Test
    void honoursAnExplicitChoice() {
        assertInstanceOf(JavaKernels.class, KernelsChooser.choose(Optional.of("java"), 2));
        try (NativeKernels scalar = (NativeKernels) KernelsChooser.choose(Optional.of("native-scalar"), 3)) {
            assertEquals(Isa.SCALAR, scalar.isa());
            assertEquals("native-scalar", scalar.name());
            assertEquals(3, scalar.threads());
        }
        try (NativeKernels avx2 = (NativeKernels) KernelsChooser.choose(Optional.of("AVX2"), 1)) {
            assertEquals(Isa.AVX2, avx2.isa());
        }
    }

    @Test
    void closesPoolsWhetherOrNotTheirWorkersHaveStarted() {
        for (int i = 0; i < 200; i++) {
            NativeKernels.create(Isa.SCALAR, 4).close();
        }
        try (NativeKernels kernels = NativeKernels.create(Isa.SCALAR, 4)) {
            float[] gate = new float[1 << 18];
            kernels.siluMul(gate, gate, gate.length);  // a job for every worker before closing
        }
    }

    @Test
    void namesTheChoicesItKnowsWhenGivenAnother() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KernelsChooser.choose(Optional.of("native-neon"), 2));
        assertTrue(e.getMessage().contains("unknown kernels 'native-neon'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KernelsChooser.choose(Optional.of("java"), 0));
    }

    @Test
    void readsStreamedWeightsAsTheCpuPrefersUnlessASettingSaysOtherwise() {
        try (NativeKernels kernels = NativeKernels.create(2)) {
            assertEquals(NativeCpu.preferredStreaming(), kernels.streaming());
            assertTrue(kernels.streaming() != Streaming.IN_PLACE, "streamed weights need staging or prefetching");
        }
        for (Streaming asked : Streaming.KNOWN) {
            System.setProperty(Streaming.PROPERTY, " " + asked.label().toUpperCase() + " ");
            try (NativeKernels kernels = NativeKernels.create(2)) {
                assertEquals(asked, kernels.streaming());
            } finally {
                System.clearProperty(Streaming.PROPERTY);
            }
        }
    }

    @Test
    void namesTheStreamingSettingWhenItIsUnknown() {
        System.setProperty(Streaming.PROPERTY, "in-place");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NativeKernels.create(2));
            assertEquals("laneway.streaming: unknown way of reading weights 'in-place' (known: staged, prefetched, prefetched-to-l2)",
                    e.getMessage());
        } finally {
            System.clearProperty(Streaming.PROPERTY);
        }
    }
}
