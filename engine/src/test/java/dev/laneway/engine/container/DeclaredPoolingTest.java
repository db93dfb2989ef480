package dev.laneway.engine.container;

import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.pack.CheckpointPacker;
import dev.laneway.engine.pack.GgufPacker;
import dev.laneway.engine.testing.Packed;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import dev.laneway.spi.Pooling;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pooling a model declares reaches the served model: a GGUF's {@code pooling_type} and a checkpoint's
 * {@code 1_Pooling/config.json} are kept by the packed container and listed in the model's metadata; a pooling
 * Laneway does not implement is refused by name when packing.
 */
class DeclaredPoolingTest {
    @TempDir
    Path dir;

    /** stories260K's GGUF with {@code llama.pooling_type} set to {@code type}. */
    private Path storiesWithPooling(long type) throws IOException {
        GgufFile source = GgufFile.open(Shared.stories260kGguf());
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", "llama");
        source.metadata().forEach((k, v) -> {
            if (!k.equals("general.architecture")) {
                w.put(k, v instanceof GgufArray a ? a.values() : v);
            }
        });
        w.put("llama.pooling_type", (int) type);
        for (var t : source.tensors()) {
            w.declare(t.name(), t.dtype(), t.shape());
        }
        Path file = dir.resolve("stories-pooling-" + type + ".gguf");
        try (GgufWriter.TensorStream out = w.begin(file)) {
            for (var t : source.tensors()) {
                out.write(t.data());
            }
        }
        return file;
    }

    @Test
    void aGgufsPoolingTypeReachesTheServedModel() throws IOException {
        Path container = dir.resolve("last");
        new GgufPacker().pack(storiesWithPooling(3), container, new PackOptions(Optional.of("f32"), false),
                PackProgress.NONE);
        assertEquals(Optional.of(Pooling.LAST), DeclaredPooling.read(container));
        try (LanewayModel model = Packed.open(container, "java")) {
            assertEquals("last", model.info().metadata().get("pooling"));
        }
        Path none = dir.resolve("none");
        new GgufPacker().pack(storiesWithPooling(0), none, new PackOptions(Optional.of("f32"), false),
                PackProgress.NONE);
        assertFalse(Files.exists(none.resolve(DeclaredPooling.FILE)));
        try (LanewayModel model = Packed.open(Packed.stories260k("f32"), "java")) {
            assertFalse(model.info().metadata().containsKey("pooling"));
        }
    }

    /** Rank pooling needs a ranking head, which stories260K has not. */
    @Test
    void rankPoolingWithoutARankingHeadIsRefusedByName() throws IOException {
        Path reranker = storiesWithPooling(4);
        FormatException e = assertThrows(FormatException.class, () -> new GgufPacker().pack(reranker,
                dir.resolve("rank"), new PackOptions(Optional.of("f32"), false), PackProgress.NONE));
        assertTrue(e.getMessage().contains("declares rank pooling (a reranker) but has no ranking head:"
                + " cls.output.weight is missing"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("rank")));
    }

    @Test
    void aCheckpointsSentenceTransformersPoolingIsKeptOrRefusedByName() throws IOException {
        Path checkpoint = dir.resolve("checkpoint");
        Packed.copy(Shared.tinystoriesCheckpoint(), checkpoint);
        DeclaredPooling.write(Pooling.CLS, 64, checkpoint);
        Path container = dir.resolve("cls");
        new CheckpointPacker().pack(checkpoint, container, new PackOptions(Optional.of("f32"), false),
                PackProgress.NONE);
        assertEquals(Optional.of(Pooling.CLS), DeclaredPooling.read(container));

        Files.writeString(checkpoint.resolve(DeclaredPooling.FILE), "{\"pooling_mode_max_tokens\": true}");
        FormatException e = assertThrows(FormatException.class, () -> new CheckpointPacker().pack(checkpoint,
                dir.resolve("max"), new PackOptions(Optional.of("f32"), false), PackProgress.NONE));
        assertTrue(e.getMessage().contains("pooling_mode_max_tokens is not supported"), e.getMessage());
        Files.writeString(checkpoint.resolve(DeclaredPooling.FILE), "{\"pooling_mode_mean_tokens\": true,"
                + " \"pooling_mode_cls_token\": true}");
        assertThrows(FormatException.class, () -> DeclaredPooling.read(checkpoint));
    }
}
