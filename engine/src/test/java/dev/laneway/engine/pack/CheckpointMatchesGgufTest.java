package dev.laneway.engine.pack;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.bench.ModelShape;
import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.gguf.GgufFile;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.safetensors.SafetensorsCheckpoint;
import dev.laneway.engine.tokenizer.GgufTokenizerConverter;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Hugging Face checkpoint and a GGUF file of the same weights pack into containers that compute the same logits. The
 * GGUF file is written here as llama.cpp's converter writes a llama model (tensor names, and q/k rows reordered so
 * each head's rotated pairs are adjacent), from the tinystories-656k checkpoint; packing puts those rows back.
 */
class CheckpointMatchesGgufTest {
    @TempDir
    Path dir;

    @Test
    void theCheckpointAndItsGgufComputeTheSameLogits() throws IOException {
        Path checkpoint = Shared.tinystoriesCheckpoint();
        ModelConfig c = ConfigJson.read(checkpoint.resolve("config.json"));
        Path gguf = dir.resolve("tinystories.gguf");
        writeGguf(SafetensorsCheckpoint.open(checkpoint).tensors(), c, gguf);

        Path fromCheckpoint = dir.resolve("hf");
        Path fromGguf = dir.resolve("gguf");
        PackOptions f32 = new PackOptions(Optional.of("f32"), false);
        new CheckpointPacker().pack(checkpoint, fromCheckpoint, f32, PackProgress.NONE);
        new GgufPacker().pack(gguf, fromGguf, f32, PackProgress.NONE);
        PlanForward a = forward(fromCheckpoint);
        PlanForward b = forward(fromGguf);
        double worst = 0;
        for (int[] prompt : new int[][]{{1, 300, 301, 302, 303}, {1, 260, 470, 311, 299, 505, 401, 263, 288, 277}}) {
            float[] x = a.forward(a.newState(prompt.length), prompt, 0, prompt.length, 0);
            float[] y = b.forward(b.newState(prompt.length), prompt, 0, prompt.length, 0);
            for (int i = 0; i < c.vocabSize(); i++) {
                worst = Math.max(worst, Math.abs(x[i] - y[i]));
            }
        }
        assertTrue(worst < 1e-4, "max logit difference " + worst);
    }

    /**
     * Phi-3: a checkpoint in Hugging Face's names and config (fused {@code qkv_proj} and {@code gate_up_proj},
     * {@code partial_rotary_factor}, longrope factors as rope_scaling lists beside a top-level original context) and
     * the GGUF file it was written from (llama.cpp's names, factor tensors, the attention factor its converter
     * computes) pack into containers with the same logits.
     */
    @Test
    void aPhi3CheckpointAndItsGgufComputeTheSameLogits() throws IOException {
        float[] shortFactors = {1.0f, 1.2f, 1.5f, 2.0f, 3.0f, 4.0f};
        float[] longFactors = {1.5f, 2.5f, 4.0f, 6.0f, 10.0f, 16.0f};
        Path gguf = dir.resolve("phi3.gguf");
        // the tiny shape's 512 positions over an original 128: factor 4, √(1 + ln 4 / ln 128) on q and k
        RandomModel.writeLongrope(ModelShape.TINY_PHI3, DType.F32, 3, gguf, shortFactors, longFactors,
                Map.of("original_context_length", 128, "attn_factor",
                        (float) Math.sqrt(1 + Math.log(4) / Math.log(128))));
        Path checkpoint = dir.resolve("phi3-hf");
        writePhi3Checkpoint(GgufFile.open(gguf), shortFactors, longFactors, checkpoint);

        PackOptions f32 = new PackOptions(Optional.of("f32"), false);
        new CheckpointPacker().pack(checkpoint, dir.resolve("hf"), f32, PackProgress.NONE);
        new GgufPacker().pack(gguf, dir.resolve("gguf"), f32, PackProgress.NONE);
        var fromGguf = Container.open(dir.resolve("gguf")).dims(512);
        var fromHf = Container.open(dir.resolve("hf")).dims(512);
        assertEquals(fromGguf.rotaryDim(), fromHf.rotaryDim());
        assertEquals(fromGguf.rope().magnitude(), fromHf.rope().magnitude(), 1e-7);  // the GGUF's is a float
        assertEquals(fromGguf.rope().at(5), fromHf.rope().at(5));
        assertSameLogits(forward(dir.resolve("hf")), forward(dir.resolve("gguf")), ModelShape.TINY_PHI3.vocab());
    }

    /**
     * Mixtures of experts: a Qwen3-MoE checkpoint (one matrix per expert, {@code mlp.experts.E.gate_proj}, ...) and a
     * Mixtral one ({@code block_sparse_moe.experts.E.w1}, ..., q/k rows in Hugging Face's order), each written from a
     * GGUF file (experts stacked, llama.cpp's names and, for Mixtral, its q/k order), pack into containers with the
     * same logits as that file.
     */
    @Test
    void mixtureCheckpointsAndTheirGgufsComputeTheSameLogits() throws IOException {
        for (ModelShape shape : List.of(ModelShape.TINY_QWEN3MOE, ModelShape.TINY_MIXTRAL)) {
            boolean mixtral = shape == ModelShape.TINY_MIXTRAL;
            String name = mixtral ? "mixtral" : "qwen3moe";
            Path gguf = dir.resolve(name + ".gguf");
            RandomModel.write(shape, DType.F32, 5, gguf);
            GgufFile file = GgufFile.open(gguf);
            ModelConfig c = dev.laneway.engine.config.GgufConfig.from(file);
            Map<String, Tensor> tensors = new LinkedHashMap<>();
            var rowOrders = GgufPacker.qkRowOrders(c);
            FusedProjections.split(GgufPacker.hfTensors(file, c.modelType()), c, gguf).forEach((n, t) ->
                    tensors.put(mixtral ? hfMixtralName(n) : n, rowOrders.containsKey(n) ? reordered(t,
                            rowOrders.get(n)) : t));
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("model_type", mixtral ? "mixtral" : "qwen3_moe");
            config.put("hidden_size", shape.hidden());
            config.put("num_hidden_layers", shape.layers());
            config.put("num_attention_heads", shape.heads());
            config.put("num_key_value_heads", shape.kvHeads());
            config.put("head_dim", shape.headDim());
            config.put("vocab_size", shape.vocab());
            config.put("max_position_embeddings", shape.context());
            config.put("rms_norm_eps", 1e-5);
            config.put("rope_theta", 10000.0);
            config.put("tie_word_embeddings", false);
            config.put("num_experts_per_tok", shape.expertsUsed());
            if (mixtral) {
                config.put("num_local_experts", shape.experts());
                config.put("intermediate_size", shape.ffn());
            } else {
                config.put("num_experts", shape.experts());
                config.put("moe_intermediate_size", shape.ffn());
                config.put("intermediate_size", 6 * shape.ffn());
                config.put("norm_topk_prob", true);
                config.put("decoder_sparse_step", 1);
                config.put("mlp_only_layers", List.of());
            }
            Path checkpoint = dir.resolve(name + "-hf");
            writeCheckpoint(tensors, config, GgufTokenizerConverter.convert(file).tokenizerJson(), checkpoint);
            PackOptions f32 = new PackOptions(Optional.of("f32"), false);
            new CheckpointPacker().pack(checkpoint, dir.resolve(name + "-from-hf"), f32, PackProgress.NONE);
            new GgufPacker().pack(gguf, dir.resolve(name + "-from-gguf"), f32, PackProgress.NONE);
            assertEquals(c.experts(), Container.open(dir.resolve(name + "-from-hf")).config().experts());
            assertSameLogits(forward(dir.resolve(name + "-from-hf")), forward(dir.resolve(name + "-from-gguf")),
                    shape.vocab());
        }
    }

    /**
     * Gemma 3: a checkpoint as Hugging Face stores one (model_type gemma3_text, {@code layer_types}, norm weights w
     * where GGUF files store 1 + w) and the GGUF file it was written from pack into containers with the same logits.
     */
    @Test
    void aGemma3CheckpointAndItsGgufComputeTheSameLogits() throws IOException {
        ModelShape shape = ModelShape.TINY_GEMMA3;
        Path gguf = dir.resolve("gemma3.gguf");
        RandomModel.write(shape, DType.F32, 5, gguf);
        GgufFile file = GgufFile.open(gguf);
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        GgufPacker.hfTensors(file, "gemma3").forEach((n, t) -> tensors.put(n, n.endsWith("norm.weight")
                ? shifted(t, -1f) : t));
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("model_type", "gemma3_text");
        config.put("hidden_size", shape.hidden());
        config.put("num_hidden_layers", shape.layers());
        config.put("num_attention_heads", shape.heads());
        config.put("num_key_value_heads", shape.kvHeads());
        config.put("head_dim", shape.headDim());
        config.put("intermediate_size", shape.ffn());
        config.put("vocab_size", shape.vocab());
        config.put("max_position_embeddings", shape.context());
        config.put("rms_norm_eps", 1e-6);
        config.put("rope_theta", 1_000_000.0);
        config.put("rope_local_base_freq", 10_000.0);
        config.put("sliding_window", 4);
        config.put("layer_types", List.of("sliding_attention", "full_attention"));
        config.put("query_pre_attn_scalar", shape.headDim());
        config.put("hidden_activation", "gelu_pytorch_tanh");
        config.put("tie_word_embeddings", false);
        config.put("attn_logit_softcapping", null);
        config.put("final_logit_softcapping", null);
        Path checkpoint = dir.resolve("gemma3-hf");
        writeCheckpoint(tensors, config, GgufTokenizerConverter.convert(file).tokenizerJson(), checkpoint);
        PackOptions f32 = new PackOptions(Optional.of("f32"), false);
        new CheckpointPacker().pack(checkpoint, dir.resolve("gemma3-from-hf"), f32, PackProgress.NONE);
        new GgufPacker().pack(gguf, dir.resolve("gemma3-from-gguf"), f32, PackProgress.NONE);
        ModelConfig fromHf = Container.open(dir.resolve("gemma3-from-hf")).config();
        assertEquals("gemma3", fromHf.modelType());
        assertEquals(2, fromHf.slidingWindowPattern());
        assertSameLogits(forward(dir.resolve("gemma3-from-hf")), forward(dir.resolve("gemma3-from-gguf")),
                shape.vocab());
    }

    /** An F32 vector with {@code delta} added to each element. */
    private static Tensor shifted(Tensor t, float delta) {
        float[] v = Dequant.toFloat(t);
        ByteBuffer out = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            out.putFloat(x + delta);
        }
        return new Tensor(t.name(), DType.F32, t.shape(), out.flip());
    }

    /** A container's name of a mixture's tensor, as Mixtral's checkpoints name it. */
    private static String hfMixtralName(String name) {
        String n = name.replace(".mlp.", ".block_sparse_moe.");
        return n.replace(".gate_proj.weight", ".w1.weight").replace(".up_proj.weight", ".w3.weight")
                .replace(".down_proj.weight", ".w2.weight");
    }

    /** An F32 matrix with row r taken from row {@code order(r)}. */
    private static Tensor reordered(Tensor t, java.util.function.IntUnaryOperator order) {
        int rows = (int) t.dim(0);
        int rowBytes = (int) t.dim(1) * 4;
        ByteBuffer in = t.data();
        ByteBuffer out = ByteBuffer.allocate(rows * rowBytes).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < rows; r++) {
            out.put(in.duplicate().position(order.applyAsInt(r) * rowBytes).limit((order.applyAsInt(r) + 1)
                    * rowBytes));
        }
        return new Tensor(t.name(), t.dtype(), t.shape(), out.flip());
    }

    private static void assertSameLogits(PlanForward a, PlanForward b, int vocab) {
        int[] prompt = {1, 300, 301, 302, 303, 260, 470, 311, 299, 505, 401};
        float[] x = a.forward(a.newState(prompt.length), prompt, 0, prompt.length, 0);
        float[] y = b.forward(b.newState(prompt.length), prompt, 0, prompt.length, 0);
        double worst = 0;
        for (int i = 0; i < vocab; i++) {
            worst = Math.max(worst, Math.abs(x[i] - y[i]));
        }
        assertTrue(worst < 1e-4, "max logit difference " + worst);
    }

    /** A checkpoint directory: the tensors (F32) in model.safetensors, config.json and tokenizer.json. */
    private static void writeCheckpoint(Map<String, Tensor> tensors, Map<String, Object> config, String tokenizer,
                                        Path dir) throws IOException {
        Files.createDirectories(dir);
        Map<String, Object> header = new LinkedHashMap<>();
        long offset = 0;
        for (var e : tensors.entrySet()) {
            long size = e.getValue().data().remaining();
            header.put(e.getKey(), Map.of("dtype", "F32", "shape", e.getValue().shape(), "data_offsets",
                    new long[]{offset, offset + size}));
            offset += size;
        }
        ObjectMapper json = new ObjectMapper();
        byte[] head = json.writeValueAsBytes(header);
        ByteBuffer out = ByteBuffer.allocate((int) (8 + head.length + offset)).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(head.length).put(head);
        tensors.values().forEach(t -> out.put(t.data()));
        Files.write(dir.resolve("model.safetensors"), out.array());
        Files.write(dir.resolve("config.json"), json.writeValueAsBytes(config));
        Files.writeString(dir.resolve("tokenizer.json"), tokenizer);
    }

    /** A Phi-3 checkpoint as Hugging Face stores one, F32, of a GGUF file's weights. */
    private static void writePhi3Checkpoint(GgufFile gguf, float[] shortFactors, float[] longFactors, Path dir)
            throws IOException {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Tensor t : gguf.tensors()) {
            if (!t.name().startsWith("rope_factors")) {
                tensors.put(GgufNames.toHuggingFace(t.name(), "phi3").orElseThrow(), t);
            }
        }
        assertTrue(tensors.containsKey("model.layers.0." + FusedProjections.QKV));
        ModelShape s = ModelShape.TINY_PHI3;
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("architectures", List.of("Phi3ForCausalLM"));
        config.put("model_type", "phi3");
        config.put("hidden_size", s.hidden());
        config.put("num_hidden_layers", s.layers());
        config.put("num_attention_heads", s.heads());
        config.put("num_key_value_heads", s.kvHeads());
        config.put("intermediate_size", s.ffn());
        config.put("vocab_size", s.vocab());
        config.put("max_position_embeddings", s.context());
        config.put("original_max_position_embeddings", 128);
        config.put("partial_rotary_factor", 0.75);
        config.put("rope_theta", 10000.0);
        config.put("rms_norm_eps", 1e-5);
        config.put("hidden_act", "silu");
        config.put("tie_word_embeddings", false);
        config.put("sliding_window", null);
        config.put("rope_scaling", Map.of("type", "longrope", "short_factor", shortFactors, "long_factor",
                longFactors));
        config.put("bos_token_id", 1);
        config.put("eos_token_id", 2);
        writeCheckpoint(tensors, config, GgufTokenizerConverter.convert(gguf).tokenizerJson(), dir);
    }

    private static PlanForward forward(Path container) throws IOException {
        Container c = Container.open(container);
        return PlanForward.compile(c.plan(), c.dims(64), c.weightSource(), new JavaKernels());
    }

    /** The checkpoint's weights as llama.cpp's converter writes a llama GGUF file, F32, tied. */
    private static void writeGguf(Map<String, Tensor> hf, ModelConfig c, Path file) throws IOException {
        GgufWriter w = new GgufWriter();
        w.put("general.architecture", "llama");
        w.put("general.file_type", 0);
        w.put("llama.context_length", c.maxPositionEmbeddings());
        w.put("llama.embedding_length", c.hiddenSize());
        w.put("llama.block_count", c.numHiddenLayers());
        w.put("llama.feed_forward_length", c.intermediateSize());
        w.put("llama.attention.head_count", c.numAttentionHeads());
        w.put("llama.attention.head_count_kv", c.numKeyValueHeads());
        w.put("llama.rope.dimension_count", c.headDim());
        w.put("llama.rope.freq_base", (float) c.ropeTheta());
        w.put("llama.attention.layer_norm_rms_epsilon", (float) c.rmsNormEps());
        RandomModel.vocabulary(w, c.vocabSize(), 256);
        Map<String, float[]> tensors = new LinkedHashMap<>();
        Map<String, long[]> shapes = new LinkedHashMap<>();
        Tensor embedding = hf.getOrDefault("model.embed_tokens.weight", hf.get("lm_head.weight"));
        add(tensors, shapes, "token_embd.weight", embedding, 0);
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            String p = "model.layers." + l + ".";
            String b = "blk." + l + ".";
            add(tensors, shapes, b + "attn_norm.weight", hf.get(p + "input_layernorm.weight"), 0);
            add(tensors, shapes, b + "attn_q.weight", hf.get(p + "self_attn.q_proj.weight"), c.headDim());
            add(tensors, shapes, b + "attn_k.weight", hf.get(p + "self_attn.k_proj.weight"), c.headDim());
            add(tensors, shapes, b + "attn_v.weight", hf.get(p + "self_attn.v_proj.weight"), 0);
            add(tensors, shapes, b + "attn_output.weight", hf.get(p + "self_attn.o_proj.weight"), 0);
            add(tensors, shapes, b + "ffn_norm.weight", hf.get(p + "post_attention_layernorm.weight"), 0);
            add(tensors, shapes, b + "ffn_gate.weight", hf.get(p + "mlp.gate_proj.weight"), 0);
            add(tensors, shapes, b + "ffn_up.weight", hf.get(p + "mlp.up_proj.weight"), 0);
            add(tensors, shapes, b + "ffn_down.weight", hf.get(p + "mlp.down_proj.weight"), 0);
        }
        add(tensors, shapes, "output_norm.weight", hf.get("model.norm.weight"), 0);
        tensors.forEach((name, v) -> w.declare(name, DType.F32, shapes.get(name)));
        try (GgufWriter.TensorStream out = w.begin(file)) {
            for (float[] v : tensors.values()) {
                ByteBuffer bytes = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
                bytes.asFloatBuffer().put(v);
                out.write(bytes);
            }
        }
    }

    /** Adds a tensor; with {@code headDim} > 0, its rows in llama.cpp's q/k order (row 2i + k of a head is HF's k·d/2 + i). */
    private static void add(Map<String, float[]> tensors, Map<String, long[]> shapes, String name, Tensor t,
                            int headDim) {
        float[] v = Dequant.toFloat(t);
        if (headDim > 0) {
            int cols = (int) t.dim(1);
            float[] out = new float[v.length];
            for (int row = 0; row < t.dim(0); row++) {
                int head = row / headDim;
                int j = row % headDim;
                int from = head * headDim + (j % 2) * (headDim / 2) + j / 2;
                System.arraycopy(v, from * cols, out, row * cols, cols);
            }
            v = out;
        }
        tensors.put(name, v);
        shapes.put(name, t.shape());
    }
}
