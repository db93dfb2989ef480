package dev.laneway.engine.q4nx;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.safetensors.SafetensorsFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@code model.q4nx} file (see {@link Q4nx}): a safetensors file whose {@code I8} tensors are 32×256 tiles.
 * Opening checks that the header says {@code "format": "q4nx"} and that each tile tensor is a whole number of tiles of
 * one kind; {@link #matrix} then views a weight as a {@link Matrix} in place.
 */
public final class Q4nxFile {
    private final SafetensorsFile file;
    /** The logical [rows, cols] of each tile tensor whose header records it. */
    private final Map<String, int[]> tileShapes;

    private Q4nxFile(SafetensorsFile file, Map<String, int[]> tileShapes) {
        this.file = file;
        this.tileShapes = Collections.unmodifiableMap(tileShapes);
    }

    /** Opens {@code model.q4nx} in a container directory, or the file itself. */
    public static Q4nxFile open(Path dirOrFile) throws IOException {
        Path path = Files.isDirectory(dirOrFile) ? dirOrFile.resolve(Q4nx.FILE_NAME) : dirOrFile;
        SafetensorsFile file = SafetensorsFile.open(path);
        String format = file.metadata().get(Q4nx.FORMAT_KEY);
        if (!Q4nx.FORMAT.equals(format)) {
            throw new FormatException(path, 8, "not a Q4NX container: __metadata__ has "
                    + (format == null ? "no format" : "format \"" + format + "\"") + ", expected \"" + Q4nx.FORMAT
                    + "\"");
        }
        Map<String, int[]> shapes = new LinkedHashMap<>();
        for (Tensor t : file.tensors()) {
            if (t.dtype() == DType.I8) {
                int[] shape = recordedShape(path, file.metadata(), t.name());
                checkTiles(path, t, shape);
                if (shape != null) {
                    shapes.put(t.name(), shape);
                }
            }
        }
        for (String key : file.metadata().keySet()) {
            String name = key.startsWith(Q4nx.SHAPE_KEY_PREFIX) ? key.substring(Q4nx.SHAPE_KEY_PREFIX.length()) : null;
            if (name != null && !shapes.containsKey(name)) {
                throw new FormatException(path, 8, "__metadata__ records a tile shape for " + name
                        + ", which is not an I8 tensor of the file");
            }
        }
        return new Q4nxFile(file, shapes);
    }

    /** The "rows,cols" recorded for a tile tensor, or null. */
    private static int[] recordedShape(Path path, Map<String, String> metadata, String name) throws FormatException {
        String value = metadata.get(Q4nx.shapeKey(name));
        if (value == null) {
            return null;
        }
        String[] parts = value.split(",");
        try {
            if (parts.length == 2) {
                int rows = Integer.parseInt(parts[0].trim());
                int cols = Integer.parseInt(parts[1].trim());
                if (rows > 0 && cols > 0) {
                    return new int[]{rows, cols};
                }
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new FormatException(path, 8, "__metadata__ " + Q4nx.shapeKey(name) + " is \"" + value
                + "\", expected \"rows,cols\" of positive integers");
    }

    private static void checkTiles(Path path, Tensor t, int[] shape) throws FormatException {
        long bytes = t.data().remaining();
        String kinds = "q4_1 (5120 B), Q4_K (4736 B) or Q8 (8704 B)";
        if (shape != null) {
            if (Q4nx.layoutOf(bytes, shape[0], shape[1]).isEmpty()) {
                throw new FormatException(path, 8, "tile tensor " + t.name() + " of " + shape[0] + "x" + shape[1]
                        + " is " + Q4nx.tileCount(shape[0], shape[1]) + " tiles of 32x256, but holds " + bytes
                        + " bytes: not that many tiles of " + kinds);
            }
        } else if (bytes == 0 || Arrays.stream(Matrix.Layout.values())
                .noneMatch(l -> l.tiled() && bytes % l.tileBytes() == 0)) {
            throw new FormatException(path, 8, "tile tensor " + t.name() + " holds " + bytes
                    + " bytes: not a whole number of tiles of " + kinds);
        }
    }

    public Path path() {
        return file.path();
    }

    /** The {@code __metadata__} strings, format and recorded tile shapes included. */
    public Map<String, String> metadata() {
        return file.metadata();
    }

    /** Every tensor, tile tensors as their raw {@code I8} bytes. */
    public List<Tensor> tensors() {
        return file.tensors();
    }

    public Optional<Tensor> tensor(String name) {
        return file.tensor(name);
    }

    /** Whether {@code name} is a tile tensor ({@code I8}). */
    public boolean tiled(String name) {
        return file.tensor(name).map(t -> t.dtype() == DType.I8).orElse(false);
    }

    /** The logical {@code [rows, cols]} the header records for a tile tensor, if it does. */
    public Optional<int[]> recordedShape(String name) {
        return Optional.ofNullable(tileShapes.get(name)).map(int[]::clone);
    }

    /**
     * A weight as a matrix: a tile tensor with a recorded shape, or a plain F32/F16/BF16 tensor of rank 2
     * ({@code [rows, cols]}) or rank 1 (one row).
     */
    public Matrix matrix(String name) throws FormatException {
        Tensor t = require(name);
        if (t.dtype() == DType.I8) {
            int[] shape = tileShapes.get(name);
            if (shape == null) {
                throw new FormatException(path(), 8, "tile tensor " + name + " has no recorded shape ("
                        + Q4nx.shapeKey(name) + " in __metadata__); give rows and cols from the config");
            }
            return matrix(name, shape[0], shape[1]);
        }
        if (t.rank() > 2 || t.rank() == 0 || t.dim(0) > Integer.MAX_VALUE || t.dim(t.rank() - 1) > Integer.MAX_VALUE) {
            throw new FormatException(path(), 8, "tensor " + name + " " + Arrays.toString(t.shape())
                    + " is not a matrix");
        }
        int rows = t.rank() == 1 ? 1 : (int) t.dim(0);
        return matrix(name, rows, (int) t.dim(t.rank() - 1));
    }

    /**
     * A weight as a rows × cols matrix, for tile tensors whose header does not record their shape (the sizes then
     * come from the model config). Fails if the tensor's size does not fit.
     */
    public Matrix matrix(String name, int rows, int cols) throws FormatException {
        Tensor t = require(name);
        long bytes = t.data().remaining();
        Matrix.Layout layout = switch (t.dtype()) {
            case F32 -> Matrix.Layout.F32;
            case F16 -> Matrix.Layout.F16;
            case BF16 -> Matrix.Layout.BF16;
            case I8 -> Q4nx.layoutOf(bytes, rows, cols).orElseThrow(() -> new FormatException(path(), 8,
                    "tile tensor " + name + " holds " + bytes + " bytes, not " + Q4nx.tileCount(rows, cols)
                            + " tiles of one kind as a " + rows + "x" + cols + " matrix needs"));
            default -> throw new FormatException(path(), 8, "tensor " + name + " of " + t.dtype()
                    + " is not a weight matrix");
        };
        if (layout.bytes(rows, cols) != bytes) {
            throw new FormatException(path(), 8, "tensor " + name + " holds " + bytes + " bytes, a " + rows + "x"
                    + cols + " " + layout + " matrix needs " + layout.bytes(rows, cols));
        }
        return new Matrix(name, layout, rows, cols, t.data());
    }

    private Tensor require(String name) throws FormatException {
        return file.tensor(name).orElseThrow(() -> new FormatException(path(), "no tensor " + name));
    }
}
