package dev.laneway.engine.q4nx;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.testing.AllocationBudget;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any bytes as a {@code model.q4nx} file: {@link Q4nxFile#open} either reads it or refuses it with a
 * {@link FormatException}, and so does {@link Q4nxFile#matrix} for every tensor it holds (tile tensors without a
 * recorded shape read as one row of tiles); a matrix it gives has exactly the bytes its layout needs. Allocation stays
 * in proportion to the file. Seeds: small containers written by {@link Q4nxWriter} with each tile kind, and the crashes
 * fuzzing found.
 */
class Q4nxFuzzTest {
    private static final AllocationBudget BUDGET = new AllocationBudget(1 << 20, 64);

    @TempDir
    static Path dir;

    @FuzzTest(maxDuration = "60s")
    void openAnyBytes(byte[] bytes) throws Exception {
        Path file = dir.resolve(Q4nx.FILE_NAME);
        Files.write(file, bytes);
        BUDGET.check(bytes.length, () -> {
            Q4nxFile q4nx;
            try {
                q4nx = Q4nxFile.open(file);
            } catch (FormatException e) {
                assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
                return;
            }
            for (Tensor t : q4nx.tensors()) {
                try {
                    Matrix m = q4nx.tiled(t.name()) && q4nx.recordedShape(t.name()).isEmpty()
                            ? q4nx.matrix(t.name(), Matrix.TILE_ROWS, Matrix.TILE_COLS * tilesOf(t))
                            : q4nx.matrix(t.name());
                    ByteBuffer data = m.data();
                    assertEquals(m.layout().bytes(m.rows(), m.cols()), data.remaining(), t.toString());
                    data.get(0);
                    data.get(data.limit() - 1);
                } catch (FormatException e) {
                    assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
                }
            }
        });
    }

    /** The tiles a tile tensor holds, read as one kind of tile by its last dimension. */
    private static int tilesOf(Tensor t) {
        long tile = t.rank() == 0 ? 1 : Math.max(1, t.dim(t.rank() - 1));
        return (int) Math.min(Integer.MAX_VALUE / Matrix.TILE_COLS, Math.max(1, t.data().remaining() / tile));
    }
}
