package dev.laneway.engine.q4nx;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.FormatException;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.safetensors.SafetensorsFile;

import java.io.IOException;
import java.nio.ByteBuffer;
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
 * Opening checks that the header says {@code "format": "q4nx"} (or, in a file without that, as FastFlowLM writes them,
 * that its I8 tensors are tiles) and that each tile tensor is a whole number of tiles of one kind; {@link #matrix}
 * then views a weight as a {@link Matrix} in place.
 */
public final class Q4nxFile {
    private static final String KINDS = "q4_1 (5120 B), Q4_K (4736 B) or Q8 (8704 B)";

    private final SafetensorsFile file;
    /** The logical [rows, cols] of each tile tensor whose header records it. */
    private final Map<String, int[]> tileShapes;
    /** The order of Q8 codes, when the file says it or Laneway wrote it. */
    private final Optional<Q8CodeOrder> q8Order;

    private Q4nxFile(SafetensorsFile file, Map<String, int[]> tileShapes, Optional<Q8CodeOrder> q8Order) {
        this.file = file;
        this.tileShapes = Collections.unmodifiableMap(tileShapes);
        this.q8Order = q8Order;
    }

    /** Opens {@code model.q4nx} in a container directory, or the file itself. */
    public static Q4nxFile open(Path dirOrFile) throws IOException {
        Path path = Files.isDirectory(dirOrFile) ? dirOrFile.resolve(Q4nx.FILE_NAME) : dirOrFile;
        SafetensorsFile file = SafetensorsFile.open(path);
        String format = file.metadata().get(Q4nx.FORMAT_KEY);
        if (format == null ? !holdsTiles(file) : !Q4nx.FORMAT.equals(format)) {
            throw new FormatException(path, 8, "not a Q4NX container: __metadata__ has "
                    + (format == null ? "no format and no I8 tensor is a tile tensor ([tiles, chunk] or [tile rows,"
                    + " tile cols, chunk] of " + KINDS + ")" : "format \"" + format + "\", expected \""
                    + Q4nx.FORMAT + "\""));
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
        return new Q4nxFile(file, shapes, q8Order(path, file.metadata(), !shapes.isEmpty()));
    }

    /** Whether the file has I8 tensors and each is shaped as tiles are: a last dimension of one tile's bytes. */
    private static boolean holdsTiles(SafetensorsFile file) {
        List<Tensor> i8 = file.tensors().stream().filter(t -> t.dtype() == DType.I8).toList();
        return !i8.isEmpty() && i8.stream().allMatch(t -> (t.rank() == 2 || t.rank() == 3)
                && Matrix.Layout.ofTileBytes(t.dim(t.rank() - 1)).filter(Matrix.Layout::tiled).isPresent());
    }

    /**
     * The Q8 code order: named by the file, or column-major in a file Laneway wrote (it records tile shapes); else
     * each Q8 tensor's codes are asked ({@link Q8CodeOrder#fromCodes}).
     */
    private static Optional<Q8CodeOrder> q8Order(Path path, Map<String, String> metadata, boolean lanewayWrote)
            throws FormatException {
        String named = metadata.get(Q8CodeOrder.KEY);
        if (named != null) {
            return Optional.of(Q8CodeOrder.named(named).orElseThrow(() -> new FormatException(path, 8,
                    "__metadata__ " + Q8CodeOrder.KEY + " is \"" + named + "\", expected \""
                            + Q8CodeOrder.COLUMN_MAJOR.value() + "\" or \"" + Q8CodeOrder.ROW_HALVES.value() + "\"")));
        }
        return lanewayWrote ? Optional.of(Q8CodeOrder.COLUMN_MAJOR) : Optional.empty();
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
        String kinds = KINDS;
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
        if (rows < 1 || cols < 1) {
            throw new FormatException(path(), 8, "tensor " + name + " " + Arrays.toString(t.shape()) + " as a " + rows
                    + "x" + cols + " matrix: a weight matrix has at least one row and one column");
        }
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
        ByteBuffer data = t.data();
        if (layout == Matrix.Layout.TILES_Q8) {
            ByteBuffer codes = data;
            Q8CodeOrder order = q8Order.or(() -> Q8CodeOrder.fromCodes(codes)).orElseThrow(() -> new FormatException(
                    path(), 8, "tile tensor " + name + " holds Q8 tiles, whose codes come in two orders of the same"
                    + " size (column-major, code (r, c) at 512 + 32c + r, as the 1bit engine reads them; row-halves,"
                    + " at 512 + 4096(r/16) + 16c + r%16, as FastFlowLM writes them); the file does not say which,"
                    + " and its codes do not tell (in neither order, or in both, does every group of 32 hold the"
                    + " ±127 of absmax scales): add \"" + Q8CodeOrder.KEY + "\": \""
                    + Q8CodeOrder.COLUMN_MAJOR.value() + "\" or \"" + Q8CodeOrder.ROW_HALVES.value()
                    + "\" to its __metadata__, or pack the model with laneway pack"));
            if (order == Q8CodeOrder.ROW_HALVES) {
                data = Q8CodeOrder.toColumnMajor(data);
            }
        } else if (layout == Matrix.Layout.TILES_Q4_1 && tileShapes.isEmpty()) {
            requireUnsignedCodes(name, data);
        }
        return new Matrix(name, layout, rows, cols, data);
    }

    /**
     * Refuses q4_1 tiles whose first tile has no zero point but 0: FastFlowLM writes a Q4_0 matrix so, with signed
     * codes, which read as the unsigned codes of q4_1 would give every weight the wrong value. (A real matrix read
     * as q4_1 has negative weights, so its zero points are not all 0.)
     */
    private void requireUnsignedCodes(String name, ByteBuffer tiles) throws FormatException {
        for (int i = 0; i < 256; i++) {
            if (tiles.getShort(512 + 2 * i) != 0) {
                return;
            }
        }
        throw new FormatException(path(), 8, "tile tensor " + name + " holds q4_1 tiles whose zero points are all 0,"
                + " as FastFlowLM writes Q4_0 weights with signed 4-bit codes; Laneway reads q4_1 codes as unsigned"
                + " (0..15, weight = code x scale + zero), so it refuses them rather than read every weight wrong:"
                + " convert the model from its GGUF file with laneway pack");
    }

    private Tensor require(String name) throws FormatException {
        return file.tensor(name).orElseThrow(() -> new FormatException(path(), "no tensor " + name));
    }
}
