package dev.laneway.engine.pack;

import dev.laneway.engine.bench.RandomModel;
import dev.laneway.engine.config.ConfigJson;
import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.format.DType;
import dev.laneway.engine.format.Tensor;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.gguf.GgufWriter;
import dev.laneway.engine.kernels.JavaKernels;
import dev.laneway.engine.quant.Dequant;
import dev.laneway.engine.safetensors.SafetensorsCheckpoint;
import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.PackOptions;
import dev.laneway.spi.PackProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

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
