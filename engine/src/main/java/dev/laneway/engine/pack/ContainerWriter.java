package dev.laneway.engine.pack;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.kernels.Matrix;
import dev.laneway.engine.kernels.RopeFrequencies;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.q4nx.Q4nx;
import dev.laneway.engine.q4nx.Q4nxWriter;
import dev.laneway.engine.quant.PlainConverter;
import dev.laneway.engine.quant.TileQuantizer;
import dev.laneway.spi.PackProgress;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;

/**
 * Writes a container's {@code model.q4nx} from source tensors named as Hugging Face does, streaming tensor by tensor,
 * band by band. Weight matrices take the chosen format. A pack with tiled matrices is laid out as the other Q4NX
 * engines read it (docs/container.md): norms and biases BF16, the embedding a BF16 {@code [vocab, hidden]} matrix, and
 * {@code lm_head.weight} tiles even when the embedding is tied. A pack without tiles keeps vectors F32 when its
 * matrices are F32, BF16 otherwise.
 */
final class ContainerWriter {
    private ContainerWriter() {
    }

    private static final String EMBEDDING = StandardPlans.EMBEDDING;
    private static final String HEAD = StandardPlans.HEAD;
    /** The end of a mixture's router's name (its layer's {@code model.layers.L.} before it). */
    private static final String ROUTER = StandardPlans.ROUTER.substring(StandardPlans.ROUTER.indexOf("}.") + 1);

    /**
     * The tensors to write, given the source's: a tiled pack gets {@code lm_head.weight} from the embedding when the
     * source ties them, because the engines that read Q4NX take the head's tiles and never tile the embedding.
     */
    static Map<String, Tensor> withHead(Map<String, Tensor> tensors, Function<DType, Quant> quant) {
        Tensor embedding = tensors.get(EMBEDDING);
        if (tensors.containsKey(HEAD) || embedding == null || quant.apply(embedding.dtype()).tiles() == null) {
            return tensors;
        }
        Map<String, Tensor> headed = new LinkedHashMap<>(tensors);
        headed.put(HEAD, embedding);
        return headed;
    }

    /** One tensor's conversion: its entry in the header, and how its bytes are made. */
    private record Conversion(Q4nxWriter.Entry entry, TileQuantizer tiles, PlainConverter plain) {
    }

    /**
     * Writes {@code tensors} (HF name → source tensor, in the order to write) into {@code dir/model.q4nx}.
     *
     * @param quant    the format of a weight matrix, from its source type
     * @param metadata extra {@code __metadata__} entries (the source); {@code quant} is added, the formats used
     */
    static void write(Path dir, Map<String, Tensor> tensors, Function<DType, Quant> quant,
                      Map<String, String> metadata, PackProgress progress) throws IOException {
        write(dir, tensors, Map.of(), quant, metadata, progress);
    }

    /**
     * As {@link #write(Path, Map, Function, Map, PackProgress)}, the rows of the matrices named in {@code rowOrders}
     * reordered: row r of the written matrix is the source's row {@code order(r)}.
     */
    static void write(Path dir, Map<String, Tensor> tensors, Map<String, IntUnaryOperator> rowOrders,
                      Function<DType, Quant> quant, Map<String, String> metadata, PackProgress progress)
            throws IOException {
        List<Conversion> conversions = new ArrayList<>();
        Set<String> quants = new LinkedHashSet<>();
        DType vectors = vectorType(tensors, quant);
        long total = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Conversion c = conversion(e.getKey(), e.getValue(), rowOrders.get(e.getKey()), quant, vectors, quants);
            conversions.add(c);
            total += c.entry().bytes();
        }
        noteWholeTiles(conversions, progress);
        Map<String, String> meta = new LinkedHashMap<>(metadata);
        meta.put("quant", String.join("+", quants));
        List<Q4nxWriter.Entry> entries = conversions.stream().map(Conversion::entry).toList();
        long[] done = {0};
        long all = total;
        try (Q4nxWriter writer = Q4nxWriter.create(dir.resolve(Q4nx.FILE_NAME), meta, entries)) {
            for (Conversion c : conversions) {
                String name = c.entry().name();
                if (c.tiles() != null) {
                    c.tiles().forEachBand(chunk -> {
                        done[0] += chunk.remaining();
                        writer.write(name, chunk);
                        progress.update(name, done[0], all);
                    });
                } else {
                    c.plain().forEachChunk(chunk -> {
                        done[0] += chunk.remaining();
                        writer.write(name, chunk);
                        progress.update(name, done[0], all);
                    });
                }
            }
            writer.finish();
        }
        progress.update("done", all, all);
    }

    /** Says when tiles are padded: the 1bit engine's reader takes only whole 32×256 tiles and refuses the rest. */
    private static void noteWholeTiles(List<Conversion> conversions, PackProgress progress) {
        List<String> padded = conversions.stream().map(Conversion::entry)
                .filter(e -> e.tiled() && (e.rows() % Matrix.TILE_ROWS != 0 || e.cols() % Matrix.TILE_COLS != 0))
                .map(e -> e.name() + " " + e.rows() + "x" + e.cols()).toList();
        if (!padded.isEmpty()) {
            progress.note(padded.size() + " weight matrices are not whole 32x256 tiles and are stored zero-padded ("
                    + padded.get(0) + (padded.size() > 1 ? ", ..." : "") + "); Laneway reads them, engines that take"
                    + " only whole tiles (the 1bit engine) refuse this container");
        }
    }

    /** The dtype of norms and biases: F32 when every matrix is stored F32, else BF16. */
    private static DType vectorType(Map<String, Tensor> tensors, Function<DType, Quant> quant) {
        boolean allF32 = tensors.entrySet().stream().filter(e -> isMatrix(e.getKey(), e.getValue()))
                .allMatch(e -> quant.apply(e.getValue().dtype()) == Quant.F32);
        return allF32 ? DType.F32 : DType.BF16;
    }

    private static boolean isMatrix(String name, Tensor t) {
        return t.rank() == 2 && !name.endsWith(".bias");
    }

    /** How one tensor is written; a weight matrix's format is added to {@code quants}. */
    private static Conversion conversion(String name, Tensor t, IntUnaryOperator rowOrder,
                                         Function<DType, Quant> quantOf, DType vectors, Set<String> quants) {
        if (rowOrder != null && !isMatrix(name, t)) {
            throw new IllegalArgumentException(name + " is no matrix whose rows could be reordered");
        }
        if (!isMatrix(name, t)) {
            // The RoPE factors are no weights the other engines read, and bf16 would round them.
            DType type = name.equals(RopeFrequencies.FACTORS_TENSOR) ? DType.F32 : vectors;
            PlainConverter plain = PlainConverter.of(t, type);
            return new Conversion(Q4nxWriter.Entry.plain(name, type, plain.shape()), null, plain);
        }
        if (name.endsWith(ROUTER) || name.equals(StandardPlans.RANKING_HEAD)) {
            // A mixture's router decides which experts run: kept F32, as llama.cpp's quantizer keeps it, so that a
            // quantized model chooses the experts llama.cpp chooses. A reranker's head, a few rows, is kept so too.
            PlainConverter plain = PlainConverter.of(t, DType.F32, rowOrder);
            return new Conversion(Q4nxWriter.Entry.plain(name, DType.F32, plain.shape()), null, plain);
        }
        Quant quant = quantOf.apply(t.dtype());
        if (name.equals(EMBEDDING) && quant.tiles() != null) {
            // Rows are looked up one per token; the head's tiles do the product.
            PlainConverter plain = PlainConverter.of(t, DType.BF16);
            return new Conversion(Q4nxWriter.Entry.plain(name, DType.BF16, plain.shape()), null, plain);
        }
        quants.add(quant.optionName());
        if (quant.tiles() != null) {
            TileQuantizer tiles = TileQuantizer.of(t, quant.tiles(),
                    rowOrder == null ? IntUnaryOperator.identity() : rowOrder);
            return new Conversion(Q4nxWriter.Entry.tiles(name, quant.tiles(), tiles.rows(), tiles.cols()), tiles, null);
        }
        PlainConverter plain = PlainConverter.of(t, quant.plain(), rowOrder);
        return new Conversion(Q4nxWriter.Entry.plain(name, quant.plain(), plain.shape()), null, plain);
    }
}
