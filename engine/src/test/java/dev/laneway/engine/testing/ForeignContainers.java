package dev.laneway.engine.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Floats;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.quant.TileQuantizer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Containers laid out as the other Q4NX engines' converters write them, by their rules and not by Laneway's writer
 * (docs/container.md): no plan.json; BF16 norms and a BF16 {@code [vocab, hidden]} embedding; every weight matrix in
 * tiles, {@code lm_head.weight} too, without {@code shape:} keys; q/k rows in Hugging Face order (as in the f32
 * containers they are made from). The tiles' bytes are those of the documented tile formats.
 *
 * <ul>
 *   <li>{@link Style#ENGINE}: the 1bit engine's converter: compact JSON, {@code __metadata__} last with format, source
 *       and converter, header and tensors 64-byte aligned, tiles {@code [tiles, chunk]}.</li>
 *   <li>{@link Style#FLM}: FastFlowLM's converter (the safetensors library): no {@code __metadata__}, tensors ordered by
 *       dtype (BF16 before I8) then name, the header padded to 8 bytes, data contiguous, tiles {@code [tiles, chunk]},
 *       Q8 codes in row-halves order.</li>
 *   <li>{@link Style#FLM_GRID}: as FLM, tiles {@code [tile rows, tile cols, chunk]}.</li>
 * </ul>
 */
public final class ForeignContainers {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ForeignContainers() {
    }

    public enum Style { ENGINE, FLM, FLM_GRID }

    /**
     * What to write besides the style's defaults.
     *
     * @param headOnly  no {@code model.embed_tokens.weight}, only the head (as some published containers are)
     * @param metadata  {@code __metadata__} entries to add (a style without metadata then gets some)
     * @param padVocab  rows added to the head, and to config.json's vocab_size, as padding to whole tiles
     * @param extra     an extra tensor of that name (a vector), which no plan reads
     * @param signedQ4  q4_1 tiles with zero points 0, as FastFlowLM writes Q4_0 weights (their codes signed)
     */
    public record Options(boolean headOnly, Map<String, String> metadata, int padVocab, String extra,
                          boolean signedQ4) {
        public static final Options NONE = new Options(false, Map.of(), 0, null, false);

        public Options withHeadOnly() {
            return new Options(true, metadata, padVocab, extra, signedQ4);
        }

        public Options withMetadata(String key, String value) {
            Map<String, String> m = new LinkedHashMap<>(metadata);
            m.put(key, value);
            return new Options(headOnly, m, padVocab, extra, signedQ4);
        }

        public Options withPaddedVocab(int rows) {
            return new Options(headOnly, metadata, rows, extra, signedQ4);
        }

        public Options withExtraTensor(String name) {
            return new Options(headOnly, metadata, padVocab, name, signedQ4);
        }

        public Options withSignedQ4() {
            return new Options(headOnly, metadata, padVocab, extra, true);
        }
    }

    /**
     * Writes {@code target} from the weights of an f32 container Laneway packed, tiled at {@code layout}.
     */
    public static Path write(Path f32Container, Path target, Style style, Matrix.Layout layout, Options options) {
        try {
            Container source = Container.open(f32Container);
            Files.createDirectories(target);
            Map<String, Object> tensors = new LinkedHashMap<>();
            Map<String, String> dtypes = new LinkedHashMap<>();
            Map<String, long[]> shapes = new LinkedHashMap<>();
            int vocab = source.config().vocabSize();
            for (Tensor t : source.weights().tensors()) {
                String name = t.name();
                float[] values = Dequant.toFloat(t);
                if (t.rank() == 1 || name.equals(StandardPlans.EMBEDDING)) {
                    if (name.equals(StandardPlans.EMBEDDING) && options.headOnly()) {
                        continue;
                    }
                    tensors.put(name, bf16(values));
                    dtypes.put(name, "BF16");
                    shapes.put(name, t.shape());
                    continue;
                }
                int rows = (int) t.dim(0);
                int cols = (int) t.dim(1);
                tile(name, values, rows, cols, layout, style, tensors, dtypes, shapes);
                if (options.signedQ4() && layout == Matrix.Layout.TILES_Q4_1) {
                    byte[] tiles = (byte[]) tensors.get(name);
                    for (int at = 0; at < tiles.length; at += layout.tileBytes()) {
                        java.util.Arrays.fill(tiles, at + 512, at + 1024, (byte) 0);
                    }
                }
            }
            if (!tensors.containsKey(StandardPlans.HEAD)) {
                float[] embedding = Dequant.toFloat(source.weights().tensor(StandardPlans.EMBEDDING).orElseThrow());
                int hidden = source.config().hiddenSize();
                float[] head = java.util.Arrays.copyOf(embedding, (vocab + options.padVocab()) * hidden);
                tile(StandardPlans.HEAD, head, vocab + options.padVocab(), hidden, layout, style, tensors, dtypes,
                        shapes);
            }
            if (options.extra() != null) {
                tensors.put(options.extra(), bf16(new float[source.config().hiddenSize()]));
                dtypes.put(options.extra(), "BF16");
                shapes.put(options.extra(), new long[]{source.config().hiddenSize()});
            }
            Map<String, String> metadata = new LinkedHashMap<>();
            if (style == Style.ENGINE) {
                metadata.put("format", "q4nx");
                metadata.put("source", f32Container.getFileName() + ".gguf");
                metadata.put("converter", "tools/gguf_to_q4nx.py");
            }
            metadata.putAll(options.metadata());
            writeFile(target.resolve(Container.WEIGHTS), style, tensors, dtypes, shapes, metadata);

            ObjectNode config = (ObjectNode) JSON.readTree(f32Container.resolve(Container.CONFIG).toFile());
            config.put("vocab_size", vocab + options.padVocab());
            if (style == Style.ENGINE) {
                config.putObject("q4nx_source").put("converter", "tools/gguf_to_q4nx.py").put("gguf", "model.gguf");
                config.put("torch_dtype", "bfloat16");
            } else {
                config.put("flm_version", "1.0.3");
            }
            Files.writeString(target.resolve(Container.CONFIG), JSON.writerWithDefaultPrettyPrinter()
                    .writeValueAsString(config));
            for (String file : List.of(Container.TOKENIZER, Container.TOKENIZER_CONFIG)) {
                if (Files.isRegularFile(f32Container.resolve(file))) {
                    Files.copy(f32Container.resolve(file), target.resolve(file));
                }
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void tile(String name, float[] values, int rows, int cols, Matrix.Layout layout, Style style,
                             Map<String, Object> tensors, Map<String, String> dtypes, Map<String, long[]> shapes)
            throws IOException {
        Tensor t = new Tensor(name, DType.F32, new long[]{rows, cols}, f32(values));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TileQuantizer.of(t, layout).forEachBand(chunk -> {
            byte[] b = new byte[chunk.remaining()];
            chunk.get(b);
            bytes.write(b);
        });
        byte[] tiles = bytes.toByteArray();
        if (layout == Matrix.Layout.TILES_Q8 && style != Style.ENGINE) {
            tiles = toRowHalves(tiles);
        }
        int tileRows = (rows + 31) / 32;
        int tileCols = (cols + 255) / 256;
        tensors.put(name, tiles);
        dtypes.put(name, "I8");
        shapes.put(name, style == Style.FLM_GRID ? new long[]{tileRows, tileCols, layout.tileBytes()}
                : new long[]{(long) tileRows * tileCols, layout.tileBytes()});
    }

    /** Q8 tiles with column-major codes (code (r, c) at 512 + 32c + r) rewritten in row-halves order. */
    private static byte[] toRowHalves(byte[] columnMajor) {
        byte[] out = columnMajor.clone();
        for (int t = 0; t < columnMajor.length / 8704; t++) {
            int base = t * 8704 + 512;
            for (int r = 0; r < 32; r++) {
                for (int c = 0; c < 256; c++) {
                    out[base + 4096 * (r / 16) + 16 * c + r % 16] = columnMajor[base + 32 * c + r];
                }
            }
        }
        return out;
    }

    private static void writeFile(Path file, Style style, Map<String, Object> tensors, Map<String, String> dtypes,
                                  Map<String, long[]> shapes, Map<String, String> metadata) throws IOException {
        List<String> order = new ArrayList<>(tensors.keySet());
        boolean library = style != Style.ENGINE;
        if (library) {
            // the safetensors library: higher dtypes first (BF16 before I8), then by name
            order.sort(Comparator.comparing((String n) -> !dtypes.get(n).equals("BF16"))
                    .thenComparing(Comparator.naturalOrder()));
        }
        int align = library ? 1 : 64;
        Map<String, Object> header = new LinkedHashMap<>();
        if (library && !metadata.isEmpty()) {
            header.put("__metadata__", metadata);
        }
        long offset = 0;
        List<long[]> spans = new ArrayList<>();
        for (String name : order) {
            offset = (offset + align - 1) / align * align;
            long size = ((byte[]) tensors.get(name)).length;
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("dtype", dtypes.get(name));
            entry.put("shape", shapes.get(name));
            entry.put("data_offsets", new long[]{offset, offset + size});
            header.put(name, entry);
            spans.add(new long[]{offset, size});
            offset += size;
        }
        if (!library) {
            header.put("__metadata__", metadata);
        }
        byte[] json = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int pad = library ? 8 : 64;
        int headerLength = (json.length + pad - 1) / pad * pad;
        ByteBuffer out = ByteBuffer.allocate((int) (8 + headerLength + offset)).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(headerLength).put(json);
        while (out.position() < 8 + headerLength) {
            out.put((byte) ' ');
        }
        for (int i = 0; i < order.size(); i++) {
            out.position((int) (8 + headerLength + spans.get(i)[0]));
            out.put((byte[]) tensors.get(order.get(i)));
        }
        Files.write(file, out.array());
    }

    private static byte[] bf16(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putShort(Floats.floatToBf16(v));
        }
        return b.array();
    }

    private static ByteBuffer f32(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putFloat(v);
        }
        return b.flip();
    }
}
