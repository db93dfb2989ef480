package dev.laneway.engine.bench;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.gguf.GgufWriter;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Writes a random-weight LoRA adapter for a GGUF model, as llama.cpp's converter lays one out ({@code general.type}
 * adapter, {@code adapter.type} lora, {@code adapter.lora.alpha}, {@code X.lora_a} [rank, in] and
 * {@code X.lora_b} [out, rank] for each targeted layer matrix, in F32 or F16, the converter's default), so that Laneway and llama.cpp can be compared on the
 * same adapter. The same seed writes the same bytes.
 */
public final class RandomAdapter {
    /** The layer matrices an adapter targets by default: every projection. */
    public static final Set<String> PROJECTIONS = Set.of("attn_q.weight", "attn_k.weight", "attn_v.weight",
            "attn_output.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight");

    private RandomAdapter() {
    }

    /**
     * Writes the adapter of {@code model} to {@code out}.
     *
     * @param targets the GGUF names, without {@code blk.N.}, of the layer matrices it changes
     * @param scale   the spread of B's entries (A's is 1/√in), which sets how far the adapter moves the model
     */
    public static void write(Path model, Path out, int rank, float alpha, Set<String> targets, float scale, long seed)
            throws IOException {
        write(model, out, rank, alpha, targets, scale, seed, DType.F32);
    }

    /** As above, the tensors in {@code type}: F32 or F16. */
    public static void write(Path model, Path out, int rank, float alpha, Set<String> targets, float scale, long seed,
                             DType type) throws IOException {
        if (type != DType.F32 && type != DType.F16) {
            throw new IllegalArgumentException("an adapter's tensors are F32 or F16 here, not " + type);
        }
        GgufFile base = GgufFile.open(model);
        String arch = base.string("general.architecture").orElseThrow(() -> new IOException(model
                + ": no general.architecture"));
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", arch);
        w.put("general.type", "adapter");
        w.put("general.name", "random adapter of " + model.getFileName() + " seed " + seed);
        w.put("adapter.type", "lora");
        w.put("adapter.lora.alpha", alpha);
        List<float[]> values = new ArrayList<>();
        Random random = new Random(seed);
        for (Tensor t : base.tensors()) {
            String[] parts = t.name().split("\\.", 3);
            if (parts.length < 3 || !parts[0].equals("blk") || !targets.contains(parts[2]) || t.rank() != 2) {
                continue;
            }
            int outDim = (int) t.dim(0);
            int in = (int) t.dim(1);
            w.declare(t.name() + ".lora_a", type, rank, in);
            w.declare(t.name() + ".lora_b", type, outDim, rank);
            values.add(gaussian(random, rank * in, (float) (1 / Math.sqrt(in))));
            values.add(gaussian(random, outDim * rank, scale));
        }
        if (values.isEmpty()) {
            throw new IOException(model + " has none of the matrices " + targets);
        }
        try (GgufWriter.TensorStream stream = w.begin(out)) {
            for (float[] v : values) {
                ByteBuffer bytes = ByteBuffer.allocate(v.length * (type == DType.F16 ? 2 : 4))
                        .order(ByteOrder.LITTLE_ENDIAN);
                for (float f : v) {
                    if (type == DType.F16) {
                        bytes.putShort(dev.laneway.engine.kernels.Floats.floatToF16(f));
                    } else {
                        bytes.putFloat(f);
                    }
                }
                stream.write(bytes.flip());
            }
        }
    }

    private static float[] gaussian(Random random, int n, float sigma) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) random.nextGaussian() * sigma;
        }
        return v;
    }

    /** {@code MODEL.gguf OUT.gguf RANK ALPHA SCALE SEED [TARGET,...|all] [F32|F16]}. */
    public static void main(String[] args) throws IOException {
        if (args.length < 6) {
            System.err.println("usage: RandomAdapter MODEL.gguf OUT.gguf RANK ALPHA SCALE SEED"
                    + " [attn_q.weight,...|all] [F32|F16]");
            System.exit(2);
        }
        Set<String> targets = args.length > 6 && !args[6].equals("all") ? Set.of(args[6].split(",")) : PROJECTIONS;
        DType type = args.length > 7 ? DType.valueOf(args[7]) : DType.F32;
        write(Path.of(args[0]), Path.of(args[1]), Integer.parseInt(args[2]), Float.parseFloat(args[3]), targets,
                Float.parseFloat(args[4]), Long.parseLong(args[5]), type);
    }
}
