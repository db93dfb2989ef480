package dev.laneway.engine.bench;

import dev.laneway.engine.format.DType;
import dev.laneway.engine.gguf.GgufArray;
import dev.laneway.engine.gguf.GgufBlockEncoder;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.kernels.RopeFrequencies;

import java.io.IOException;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes a GGUF file of a given shape with random weights (llama, Gemma 2 and 3, Phi-3, Qwen3-MoE or Mixtral), so that
 * Laneway and llama.cpp can be timed on the same file. Speed does not depend on the values; they are uniform with a
 * variance that keeps activations bounded. The vocabulary is synthetic (byte tokens plus placeholders) but complete
 * enough for llama.cpp.
 *
 * <p>Norm weights are F32; every other matrix, embeddings and output head included, has the chosen type. RoPE
 * frequency factors, when given, are written as llama.cpp writes those of Llama 3.x models: an F32
 * {@code rope_freqs.weight} tensor with one factor per rotated pair. A Phi-3 model has its q/k/v and gate/up
 * projections fused and, when given, longrope factors as {@code rope_factors_short.weight} and
 * {@code rope_factors_long.weight}, as llama.cpp's converter writes them.
 */
public final class RandomModel {
    private static final int CHUNK_ROWS = 64;

    private RandomModel() {
    }

    /** Writes the model to {@code file}. */
    public static void write(ModelShape s, DType type, long seed, Path file) throws IOException {
        write(s, type, seed, file, (float[]) null);
    }

    /** Writes the model to {@code file}, with {@code ropeFactors} (one per rotated pair) unless null. */
    public static void write(ModelShape s, DType type, long seed, Path file, float[] ropeFactors) throws IOException {
        write(s, type, seed, file, ropeFactors, Map.of());
    }

    /**
     * As {@link #write(ModelShape, DType, long, Path, float[])}, with {@code llama.rope.scaling.*} metadata: each
     * entry's key after that prefix (e.g. {@code type}, {@code factor}, {@code original_context_length}), its value a
     * String, an Integer (u32) or a Float.
     */
    public static void write(ModelShape s, DType type, long seed, Path file, float[] ropeFactors,
                             Map<String, Object> ropeScaling) throws IOException {
        write(s, type, seed, file, ropeFactors, ropeScaling, null, null, null, null);
    }

    /**
     * A random model with a real tokenizer: every {@code tokenizer.*} key of {@code vocabulary} (a GGUF such as
     * llama.cpp's vocabulary-only files) instead of the synthetic vocabulary; the shape's vocabulary size must be
     * that tokenizer's.
     */
    public static void write(ModelShape s, DType type, long seed, Path file, GgufFile vocabulary) throws IOException {
        write(s, type, seed, file, null, Map.of(), vocabulary, null, null, null);
    }

    /**
     * A Qwen3 reranker, as llama.cpp's converter writes one: {@code pooling_type} 4 (rank), the classifier's labels
     * {@code yes} and {@code no}, an F32 {@code cls.output.weight} of a row per label, and, unless null, the rerank
     * prompt as {@code tokenizer.chat_template.rerank} ({@code {query}} and {@code {document}} in place).
     */
    public static void writeReranker(ModelShape s, DType type, long seed, Path file, String rerankTemplate)
            throws IOException {
        if (!s.arch().equals("qwen3")) {
            throw new IllegalArgumentException("llama.cpp ranks with a Qwen3 model's head; the shape is " + s.arch());
        }
        write(s, type, seed, file, null, Map.of(), null, null, null, new Reranker(rerankTemplate));
    }

    /** A reranker's head and prompt: see {@link #writeReranker}. */
    private record Reranker(String template) {
        static final String[] LABELS = {"yes", "no"};
    }

    /**
     * A Phi-3 model with longrope factors, one per rotated pair each, and {@code phi3.rope.scaling.*} metadata as
     * {@link #write(ModelShape, DType, long, Path, float[], Map)} takes it (e.g. {@code original_context_length},
     * {@code attn_factor}).
     */
    public static void writeLongrope(ModelShape s, DType type, long seed, Path file, float[] shortFactors,
                                     float[] longFactors, Map<String, Object> ropeScaling) throws IOException {
        write(s, type, seed, file, null, ropeScaling, null, new float[][]{shortFactors, longFactors}, null, null);
    }

    private static void write(ModelShape s, DType type, long seed, Path file, float[] ropeFactors,
                              Map<String, Object> ropeScaling, GgufFile vocabulary, float[][] longrope,
                              boolean[] silentTokens, Reranker reranker) throws IOException {
        boolean phi3 = s.arch().equals("phi3");
        boolean moe = s.experts() > 0;
        boolean qkNorm = s.arch().equals("gemma3") || s.arch().startsWith("qwen3");
        for (float[] factors : longrope == null ? new float[][]{ropeFactors} : longrope) {
            if (factors != null && factors.length != s.rotaryDim() / 2) {
                throw new IllegalArgumentException("a head rotates " + s.rotaryDim() / 2 + " pairs, got "
                        + factors.length + " RoPE factors");
            }
        }
        if (longrope != null && !phi3) {
            throw new IllegalArgumentException("longrope factors are written for phi3 shapes only");
        }
        if (!GgufBlockEncoder.supports(type)) {
            throw new IllegalArgumentException("random models are written as F32, F16, Q8_0, Q4_0, Q4_1 or Q4_K, not "
                    + type);
        }
        if (s.hidden() % type.blockSize() != 0 || s.ffn() % type.blockSize() != 0) {
            throw new IllegalArgumentException(type + " needs rows of whole " + type.blockSize() + "-element blocks; "
                    + "this shape's hidden size is " + s.hidden() + " and its ffn " + s.ffn() + " (tiny-wide fits)");
        }
        boolean gemma = s.arch().startsWith("gemma");
        boolean gemma2 = s.arch().equals("gemma2");
        GgufWriter w = new GgufWriter();
        metadata(w, s, type);
        if (vocabulary != null) {
            tokenizerOf(w, vocabulary, s.vocab());
        } else {
            // a reranker reads text, whose word pieces need every byte; it generates none
            vocabulary(w, s.vocab(), s.vocab() == ModelShape.TINY.vocab() && reranker == null ? 128 : 256);
        }
        if (reranker != null) {
            w.put(s.arch() + ".pooling_type", 4);
            w.put(s.arch() + ".classifier.output_labels", Reranker.LABELS);
            if (reranker.template() != null) {
                w.put("tokenizer.chat_template.rerank", reranker.template());
            }
        }
        for (Map.Entry<String, Object> e : ropeScaling.entrySet()) {
            String key = s.arch() + ".rope.scaling." + e.getKey();
            if (e.getValue() instanceof String v) {
                w.put(key, v);
            } else if (e.getValue() instanceof Integer v) {
                w.put(key, v);
            } else if (e.getValue() instanceof Float v) {
                w.put(key, v);
            } else {
                throw new IllegalArgumentException(key + ": " + e.getValue() + " is not a string, int or float");
            }
        }
        int kvDim = s.kvHeads() * s.headDim();
        w.declare("token_embd.weight", type, s.vocab(), s.hidden());
        if (ropeFactors != null) {
            w.declare(RopeFrequencies.FACTORS_TENSOR, DType.F32, ropeFactors.length);
        }
        if (longrope != null) {
            w.declare("rope_factors_long.weight", DType.F32, longrope[1].length);
            w.declare("rope_factors_short.weight", DType.F32, longrope[0].length);
        }
        int qkvRows = s.qDim() + 2 * kvDim;
        for (int l = 0; l < s.layers(); l++) {
            String b = "blk." + l + ".";
            w.declare(b + "attn_norm.weight", DType.F32, s.hidden());
            if (phi3) {
                w.declare(b + "attn_qkv.weight", type, qkvRows, s.hidden());
            } else {
                w.declare(b + "attn_q.weight", type, s.qDim(), s.hidden());
                w.declare(b + "attn_k.weight", type, kvDim, s.hidden());
                w.declare(b + "attn_v.weight", type, kvDim, s.hidden());
            }
            if (qkNorm) {
                w.declare(b + "attn_q_norm.weight", DType.F32, s.headDim());
                w.declare(b + "attn_k_norm.weight", DType.F32, s.headDim());
            }
            w.declare(b + "attn_output.weight", type, s.hidden(), s.qDim());
            if (gemma) {
                w.declare(b + "post_attention_norm.weight", DType.F32, s.hidden());
            }
            w.declare(b + "ffn_norm.weight", DType.F32, s.hidden());
            if (moe) {
                // the router stays F32, as llama.cpp's quantizer leaves it
                w.declare(b + "ffn_gate_inp.weight", DType.F32, s.experts(), s.hidden());
                w.declare(b + "ffn_gate_exps.weight", type, s.experts(), s.ffn(), s.hidden());
                w.declare(b + "ffn_up_exps.weight", type, s.experts(), s.ffn(), s.hidden());
                w.declare(b + "ffn_down_exps.weight", type, s.experts(), s.hidden(), s.ffn());
            } else if (phi3) {
                w.declare(b + "ffn_up.weight", type, 2 * s.ffn(), s.hidden());  // gate rows, then up rows
            } else {
                w.declare(b + "ffn_gate.weight", type, s.ffn(), s.hidden());
                w.declare(b + "ffn_up.weight", type, s.ffn(), s.hidden());
            }
            if (!moe) {
                w.declare(b + "ffn_down.weight", type, s.hidden(), s.ffn());
            }
            if (gemma) {
                w.declare(b + "post_ffw_norm.weight", DType.F32, s.hidden());
            }
        }
        w.declare("output_norm.weight", DType.F32, s.hidden());
        // Gemma ties its head to the embedding; an own head keeps a random model from repeating its last token, but
        // llama.cpp's Gemma 2 refuses a file that has one
        if (!gemma2) {
            w.declare("output.weight", type, s.vocab(), s.hidden());
        }
        if (reranker != null) {
            w.declare("cls.output.weight", DType.F32, Reranker.LABELS.length, s.hidden());
        }

        SplittableRandom random = new SplittableRandom(seed);
        try (GgufWriter.TensorStream out = w.begin(file)) {
            matrix(out, type, s.vocab(), s.hidden(), random);
            if (ropeFactors != null) {
                floats(out, ropeFactors);
            }
            if (longrope != null) {
                floats(out, longrope[1]);
                floats(out, longrope[0]);
            }
            for (int l = 0; l < s.layers(); l++) {
                norm(out, s.hidden(), random);
                if (phi3) {
                    matrix(out, type, qkvRows, s.hidden(), random);
                } else {
                    matrix(out, type, s.qDim(), s.hidden(), random);
                    matrix(out, type, kvDim, s.hidden(), random);
                    matrix(out, type, kvDim, s.hidden(), random);
                }
                if (qkNorm) {
                    norm(out, s.headDim(), random);
                    norm(out, s.headDim(), random);
                }
                matrix(out, type, s.hidden(), s.qDim(), random);
                if (gemma) {
                    norm(out, s.hidden(), random);
                }
                norm(out, s.hidden(), random);
                if (moe) {
                    matrix(out, DType.F32, s.experts(), s.hidden(), random);
                    matrix(out, type, s.experts() * s.ffn(), s.hidden(), random);
                    matrix(out, type, s.experts() * s.ffn(), s.hidden(), random);
                    matrix(out, type, s.experts() * s.hidden(), s.ffn(), random);
                } else if (phi3) {
                    matrix(out, type, 2 * s.ffn(), s.hidden(), random);
                    matrix(out, type, s.hidden(), s.ffn(), random);
                } else {
                    matrix(out, type, s.ffn(), s.hidden(), random);
                    matrix(out, type, s.ffn(), s.hidden(), random);
                    matrix(out, type, s.hidden(), s.ffn(), random);
                }
                if (gemma) {
                    norm(out, s.hidden(), random);
                }
            }
            norm(out, s.hidden(), random);
            if (!gemma2) {
                matrix(out, type, s.vocab(), s.hidden(), random, silentTokens);
            }
            if (reranker != null) {
                matrix(out, DType.F32, Reranker.LABELS.length, s.hidden(), random);
            }
        }
    }

    private static void metadata(GgufWriter w, ModelShape s, DType type) {
        String a = s.arch() + ".";
        w.put("general.architecture", s.arch());
        w.put("general.name", "random-" + s.hidden() + "x" + s.layers() + "-" + type.name().toLowerCase());
        w.put("general.file_type", switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q4_1 -> 3;
            case Q8_0 -> 7;
            case Q4_K -> 14;
            default -> throw new IllegalArgumentException(type.name());
        });
        w.put(a + "context_length", s.context());
        w.put(a + "embedding_length", s.hidden());
        w.put(a + "block_count", s.layers());
        w.put(a + "feed_forward_length", s.ffn());
        w.put(a + "attention.head_count", s.heads());
        w.put(a + "attention.head_count_kv", s.kvHeads());
        w.put(a + "rope.dimension_count", s.rotaryDim());
        if (s.arch().equals("gemma3")) {
            // as Gemma 3: global layers at base 10^6, sliding-window ones at 10^4 (the tiny shape: every other one)
            w.put(a + "attention.key_length", s.headDim());
            w.put(a + "attention.value_length", s.headDim());
            w.put(a + "rope.freq_base", 1_000_000f);
            w.put(a + "rope.freq_base_swa", 10_000f);
            boolean tiny = s.hidden() == ModelShape.TINY.hidden();
            w.put(a + "attention.sliding_window", tiny ? 4 : 512);
            w.put(a + "attention.sliding_window_pattern", tiny ? 2 : 6);
            w.put(a + "attention.layer_norm_rms_epsilon", 1e-6f);
        } else if (s.arch().equals("gemma2")) {
            // as Gemma 2: one RoPE base, a window on every other layer, capped attention scores and logits (the tiny
            // shape's caps low enough to bite on random weights)
            boolean tiny = s.hidden() == ModelShape.TINY.hidden();
            w.put(a + "attention.key_length", s.headDim());
            w.put(a + "attention.value_length", s.headDim());
            w.put(a + "rope.freq_base", 10_000f);
            w.put(a + "attention.sliding_window", tiny ? 4 : 4096);
            w.put(a + "attn_logit_softcapping", tiny ? 1.5f : 50f);
            w.put(a + "final_logit_softcapping", tiny ? 3f : 30f);
            w.put(a + "attention.layer_norm_rms_epsilon", 1e-6f);
        } else {
            w.put(a + "rope.freq_base", 10000f);
            w.put(a + "attention.layer_norm_rms_epsilon", 1e-5f);
        }
        if (s.arch().equals("phi3")) {
            w.put(a + "attention.sliding_window", 0);  // as Phi-4-mini's converter writes it: no window
        }
        if (s.arch().equals("qwen3")) {
            w.put(a + "attention.key_length", s.headDim());
            w.put(a + "attention.value_length", s.headDim());
        }
        if (s.experts() > 0) {
            // as Qwen3-MoE: heads of their own width
            w.put(a + "attention.key_length", s.headDim());
            w.put(a + "attention.value_length", s.headDim());
            w.put(a + "expert_count", s.experts());
            w.put(a + "expert_used_count", s.expertsUsed());
            if (s.arch().equals("qwen3moe")) {
                // a llama file's experts are feed_forward_length wide
                w.put(a + "expert_feed_forward_length", s.ffn());
            }
        }
    }

    private static void tokenizerOf(GgufWriter w, GgufFile vocabulary, int vocab) {
        Object tokens = vocabulary.get("tokenizer.ggml.tokens").orElseThrow(() -> new IllegalArgumentException(
                vocabulary.path() + " has no tokenizer.ggml.tokens"));
        int size = ((GgufArray) tokens).length();
        if (size != vocab) {
            throw new IllegalArgumentException(vocabulary.path() + " has " + size + " tokens, the shape " + vocab);
        }
        vocabulary.metadata().forEach((k, v) -> {
            if (k.startsWith("tokenizer.")) {
                // ids and counts are read back as Long; written as Integer they stay UINT32, as llama.cpp reads them
                w.put(k, v instanceof GgufArray a ? a.values() : v instanceof Long l && l == (l & 0xffffffffL)
                        ? (Object) (int) (long) l : v);
            }
        });
    }

    /**
     * A SentencePiece-style vocabulary: unk, bos, eos, byte tokens, then unique placeholder pieces. The tiny shapes
     * (a vocabulary of 512) have byte tokens for ASCII only, so that any text they generate is valid UTF-8
     * (llama-server, which makes their reference outputs, fails a request whose output is not); the others have all
     * 256.
     */
    public static void vocabulary(GgufWriter w, int vocab, int byteTokens) {
        String[] tokens = new String[vocab];
        float[] scores = new float[vocab];
        int[] types = new int[vocab];
        tokens[0] = "<unk>";
        types[0] = 2;
        tokens[1] = "<s>";
        types[1] = 3;
        tokens[2] = "</s>";
        types[2] = 3;
        for (int b = 0; b < byteTokens; b++) {
            tokens[3 + b] = String.format("<0x%02X>", b);
            types[3 + b] = 6;
        }
        for (int i = 3 + byteTokens; i < vocab; i++) {
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
        floats(out, v);
    }

    private static void floats(GgufWriter.TensorStream out, float[] v) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        GgufBlockEncoder.encode(DType.F32, v, 0, v.length, b);
        out.write(b.flip());
    }

    private static void matrix(GgufWriter.TensorStream out, DType type, int rows, int cols, SplittableRandom random)
            throws IOException {
        matrix(out, type, rows, cols, random, null);
    }

    /**
     * The tokens of a real vocabulary that are not text pieces: bytes (whose text alone may be a partial UTF-8
     * character, which llama-server refuses to send), control and unused tokens. The command line's models have zero
     * rows of the head for them, so that they never generate them (some other token's logit is always above 0).
     */
    private static boolean[] notText(GgufFile vocabulary) {
        GgufArray types = (GgufArray) vocabulary.get("tokenizer.ggml.token_type").orElseThrow(
                () -> new IllegalArgumentException(vocabulary.path() + " has no tokenizer.ggml.token_type"));
        boolean[] zero = new boolean[types.length()];
        Object values = types.values();
        for (int t = 0; t < zero.length; t++) {
            zero[t] = ((Number) Array.get(values, t)).intValue() != 1;  // 1: a normal piece
        }
        return zero;
    }

    /** A random matrix whose rows marked in {@code zeroRows} (when given) are zero. */
    private static void matrix(GgufWriter.TensorStream out, DType type, int rows, int cols, SplittableRandom random,
                               boolean[] zeroRows) throws IOException {
        float bound = (float) Math.sqrt(3.0 / cols);
        int chunk = Math.min(rows, CHUNK_ROWS);
        float[] v = new float[chunk * cols];
        ByteBuffer b = ByteBuffer.allocate((int) type.bytesFor((long) chunk * cols)).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < rows; r += chunk) {
            int n = Math.min(chunk, rows - r) * cols;
            for (int i = 0; i < n; i++) {
                v[i] = (random.nextFloat() * 2f - 1f) * bound;
                if (zeroRows != null && zeroRows[r + i / cols]) {
                    v[i] = 0f;
                }
            }
            b.clear();
            GgufBlockEncoder.encode(type, v, 0, n, b);
            out.write(b.flip());
        }
    }

    /**
     * {@code RandomModel SHAPE TYPE FILE [SEED] [--vocab VOCAB.gguf] [--rope-freqs F,F,...] [--rope-scaling
     * KEY=VALUE,...]}: e.g. {@code 1b Q8_0 /tmp/1b-q8_0.gguf}, or {@code tiny F32 yarn.gguf 7 --rope-scaling
     * type=yarn,factor=4,original_context_length=128} (values with a dot are floats, other numbers ints). With
     * {@code --vocab} the tokenizer is a real one, a vocabulary-only GGUF's of the shape's vocabulary size (the 1B
     * shape and llama.cpp's {@code ggml-vocab-llama-spm.gguf}), and the model generates text pieces only: generated
     * text then reads back as the same tokens, as a trained model's mostly does.
     */
    public static void main(String[] args) throws IOException {
        List<String> positional = new ArrayList<>();
        float[] ropeFactors = null;
        float[][] longrope = new float[2][];
        Map<String, Object> ropeScaling = new java.util.LinkedHashMap<>();
        Path vocabulary = null;
        boolean reranker = false;
        String rerankTemplate = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--vocab") && i + 1 < args.length) {
                vocabulary = Path.of(args[++i]);
            } else if (args[i].equals("--reranker")) {
                reranker = true;
            } else if (args[i].equals("--rerank-template") && i + 1 < args.length) {
                reranker = true;
                rerankTemplate = args[++i];
            } else if (args[i].equals("--rope-scaling") && i + 1 < args.length) {
                for (String pair : args[++i].split(",")) {
                    String[] kv = pair.split("=", 2);
                    String v = kv[1].trim();
                    ropeScaling.put(kv[0].trim(), v.matches("-?\\d+") ? Integer.valueOf(v)
                            : v.matches("-?[\\d.]+(e-?\\d+)?") ? (Object) Float.valueOf(v) : v);
                }
            } else if (args[i].equals("--rope-freqs") && i + 1 < args.length) {
                ropeFactors = floats(args[++i]);
            } else if (args[i].equals("--longrope-short") && i + 1 < args.length) {
                longrope[0] = floats(args[++i]);
            } else if (args[i].equals("--longrope-long") && i + 1 < args.length) {
                longrope[1] = floats(args[++i]);
            } else {
                positional.add(args[i]);
            }
        }
        if (positional.size() < 3) {
            System.err.println("usage: RandomModel SHAPE (tiny, tiny-wide, stories15m, 1b, tiny-gemma2, tiny-gemma3, "
                    + "gemma3-1b, tiny-phi3, phi4-mini, tiny-qwen3, tiny-qwen3moe, tiny-mixtral, qwen3-30b-a3b; NAME:LAYERS) "
                    + "F32|F16|Q8_0|Q4_0|Q4_1|Q4_K FILE [SEED] [--vocab VOCAB.gguf] [--rope-freqs F,F,...] [--rope-scaling KEY=VALUE,...] "
                    + "[--longrope-short F,F,... --longrope-long F,F,...] [--reranker | --rerank-template TEXT]");
            System.exit(2);
        }
        ModelShape shape = ModelShape.named(positional.get(0));
        DType type = DType.valueOf(positional.get(1).toUpperCase(java.util.Locale.ROOT));
        long seed = positional.size() > 3 ? Long.parseLong(positional.get(3)) : 1;
        if ((longrope[0] == null) != (longrope[1] == null)) {
            System.err.println("--longrope-short and --longrope-long go together");
            System.exit(2);
        }
        GgufFile vocab = vocabulary == null ? null : GgufFile.open(vocabulary);
        if (reranker) {
            writeReranker(shape, type, seed, Path.of(positional.get(2)), rerankTemplate);
            return;
        }
        write(shape, type, seed, Path.of(positional.get(2)), ropeFactors, ropeScaling, vocab,
                longrope[0] == null ? null : longrope, vocab == null ? null : notText(vocab), null);
    }

    private static float[] floats(String list) {
        String[] parts = list.split(",");
        float[] v = new float[parts.length];
        for (int p = 0; p < parts.length; p++) {
            v[p] = Float.parseFloat(parts[p].trim());
        }
        return v;
    }
}
