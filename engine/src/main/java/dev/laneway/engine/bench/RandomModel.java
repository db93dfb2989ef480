package dev.laneway.engine.bench;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.gguf.GgufBlockEncoder;
import dev.laneway.engine.gguf.GgufWriter;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Writes a llama-architecture GGUF file of a given shape with random weights, so that Laneway and llama.cpp can be
 * timed on the same file. Speed does not depend on the values; they are uniform with a variance that keeps
 * activations bounded. The vocabulary is synthetic (byte tokens plus placeholders) but complete enough for llama.cpp.
 *
 * <p>Norm weights are F32; every other matrix, embeddings and output head included, has the chosen type.
 */
public final class RandomModel {
    private static final int CHUNK_ROWS = 64;

    private RandomModel() {
    }

    /** Writes the model to {@code file}. */
    public static void write(ModelShape s, DType type, long seed, Path file) throws IOException {
        if (!GgufBlockEncoder.supports(type)) {
            throw new IllegalArgumentException("random models are written as F32, F16, Q8_0, Q4_0 or Q4_1, not " + type);
        }
        GgufWriter w = new GgufWriter();
        metadata(w, s, type);
        int kvDim = s.kvHeads() * s.headDim();
        w.declare("token_embd.weight", type, s.vocab(), s.hidden());
        for (int l = 0; l < s.layers(); l++) {
            String b = "blk." + l + ".";
            w.declare(b + "attn_norm.weight", DType.F32, s.hidden());
            w.declare(b + "attn_q.weight", type, s.hidden(), s.hidden());
            w.declare(b + "attn_k.weight", type, kvDim, s.hidden());
            w.declare(b + "attn_v.weight", type, kvDim, s.hidden());
            w.declare(b + "attn_output.weight", type, s.hidden(), s.hidden());
            w.declare(b + "ffn_norm.weight", DType.F32, s.hidden());
            w.declare(b + "ffn_gate.weight", type, s.ffn(), s.hidden());
            w.declare(b + "ffn_up.weight", type, s.ffn(), s.hidden());
            w.declare(b + "ffn_down.weight", type, s.hidden(), s.ffn());
        }
        w.declare("output_norm.weight", DType.F32, s.hidden());
        w.declare("output.weight", type, s.vocab(), s.hidden());

        SplittableRandom random = new SplittableRandom(seed);
        try (GgufWriter.TensorStream out = w.begin(file)) {
            matrix(out, type, s.vocab(), s.hidden(), random);
            for (int l = 0; l < s.layers(); l++) {
                norm(out, s.hidden(), random);
                matrix(out, type, s.hidden(), s.hidden(), random);
                matrix(out, type, kvDim, s.hidden(), random);
                matrix(out, type, kvDim, s.hidden(), random);
                matrix(out, type, s.hidden(), s.hidden(), random);
                norm(out, s.hidden(), random);
                matrix(out, type, s.ffn(), s.hidden(), random);
                matrix(out, type, s.ffn(), s.hidden(), random);
                matrix(out, type, s.hidden(), s.ffn(), random);
            }
            norm(out, s.hidden(), random);
            matrix(out, type, s.vocab(), s.hidden(), random);
        }
    }

    private static void metadata(GgufWriter w, ModelShape s, DType type) {
        w.put("general.architecture", "llama");
        w.put("general.name", "random-" + s.hidden() + "x" + s.layers() + "-" + type.name().toLowerCase());
        w.put("general.file_type", switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q4_1 -> 3;
            case Q8_0 -> 7;
            default -> throw new IllegalArgumentException(type.name());
        });
        w.put("llama.context_length", s.context());
        w.put("llama.embedding_length", s.hidden());
        w.put("llama.block_count", s.layers());
        w.put("llama.feed_forward_length", s.ffn());
        w.put("llama.attention.head_count", s.heads());
        w.put("llama.attention.head_count_kv", s.kvHeads());
        w.put("llama.rope.dimension_count", s.headDim());
        w.put("llama.rope.freq_base", 10000f);
        w.put("llama.attention.layer_norm_rms_epsilon", 1e-5f);
        vocabulary(w, s.vocab());
    }

    /** A SentencePiece-style vocabulary: unk, bos, eos, the 256 byte tokens, then unique placeholder pieces. */
    private static void vocabulary(GgufWriter w, int vocab) {
        String[] tokens = new String[vocab];
        float[] scores = new float[vocab];
        int[] types = new int[vocab];
        tokens[0] = "<unk>";
        types[0] = 2;
        tokens[1] = "<s>";
        types[1] = 3;
        tokens[2] = "</s>";
        types[2] = 3;
        for (int b = 0; b < 256; b++) {
            tokens[3 + b] = String.format("<0x%02X>", b);
            types[3 + b] = 6;
        }
        for (int i = 259; i < vocab; i++) {
            tokens[i] = "\u2581t" + i;
            scores[i] = -i;
            types[i] = 1;
        }
        w.put("tokenizer.ggml.model", "llama");
        w.put("tokenizer.ggml.tokens", tokens);
        w.put("tokenizer.ggml.scores", scores);
        w.put("tokenizer.ggml.token_type", types);
        w.put("tokenizer.ggml.bos_token_id", 1);
        w.put("tokenizer.ggml.eos_token_id", 2);
        w.put("tokenizer.ggml.unknown_token_id", 0);
    }

    private static void norm(GgufWriter.TensorStream out, int n, SplittableRandom random) throws IOException {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = 1f + (float) random.nextDouble(-0.1, 0.1);
        }
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        GgufBlockEncoder.encode(DType.F32, v, 0, n, b);
        out.write(b.flip());
    }

    private static void matrix(GgufWriter.TensorStream out, DType type, int rows, int cols, SplittableRandom random)
            throws IOException {
        float bound = (float) Math.sqrt(3.0 / cols);
        int chunk = Math.min(rows, CHUNK_ROWS);
        float[] v = new float[chunk * cols];
        ByteBuffer b = ByteBuffer.allocate((int) type.bytesFor((long) chunk * cols)).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < rows; r += chunk) {
            int n = Math.min(chunk, rows - r) * cols;
            for (int i = 0; i < n; i++) {
                v[i] = (random.nextFloat() * 2f - 1f) * bound;
            }
            b.clear();
            GgufBlockEncoder.encode(type, v, 0, n, b);
            out.write(b.flip());
        }
    }

    /** {@code RandomModel SHAPE TYPE FILE [SEED]}: e.g. {@code 1b Q8_0 /tmp/1b-q8_0.gguf}. */
    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: RandomModel stories15m|1b F32|F16|Q8_0|Q4_0|Q4_1 FILE [SEED]");
            System.exit(2);
        }
        ModelShape shape = ModelShape.named(args[0]);
        DType type = DType.valueOf(args[1].toUpperCase(java.util.Locale.ROOT));
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 1;
        write(shape, type, seed, Path.of(args[2]));
    }
}
