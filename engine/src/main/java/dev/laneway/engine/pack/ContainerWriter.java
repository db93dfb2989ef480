package dev.laneway.engine.pack;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
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

/**
 * Writes a container's {@code model.q4nx} from source tensors named as Hugging Face does: weight matrices in the
 * chosen format, vectors (norms, biases) as F32. Streams tensor by tensor, band by band.
 */
final class ContainerWriter {
    private ContainerWriter() {
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
        List<Conversion> conversions = new ArrayList<>();
        Set<String> quants = new LinkedHashSet<>();
        long total = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Conversion c = conversion(e.getKey(), e.getValue(), quant, quants);
            conversions.add(c);
            total += c.entry().bytes();
        }
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

    /** How one tensor is written; a weight matrix's format is added to {@code quants}. */
    private static Conversion conversion(String name, Tensor t, Function<DType, Quant> quantOf, Set<String> quants) {
        boolean matrix = t.rank() == 2 && !name.endsWith(".bias");
        if (!matrix) {
            PlainConverter plain = PlainConverter.of(t, DType.F32);
            return new Conversion(Q4nxWriter.Entry.plain(name, DType.F32, plain.shape()), null, plain);
        }
        Quant quant = quantOf.apply(t.dtype());
        quants.add(quant.optionName());
        if (quant.tiles() != null) {
            TileQuantizer tiles = TileQuantizer.of(t, quant.tiles());
            return new Conversion(Q4nxWriter.Entry.tiles(name, quant.tiles(), tiles.rows(), tiles.cols()), tiles, null);
        }
        PlainConverter plain = PlainConverter.of(t, quant.plain());
        return new Conversion(Q4nxWriter.Entry.plain(name, quant.plain(), plain.shape()), null, plain);
    }
}
