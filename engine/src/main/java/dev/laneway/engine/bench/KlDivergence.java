package dev.laneway.engine.bench;

import dev.laneway.engine.model.LanewayModel;
import dev.laneway.engine.model.ModelAssembly;
import dev.laneway.spi.RouteOptions;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * A model's distance from a base model, measured as {@code llama-perplexity --kl-divergence} measures llama.cpp's, from
 * the same file of the base model's log-probabilities that {@code llama-perplexity --kl-divergence-base} wrote: for
 * each chunk of its tokens (the first made the model's BOS where the model adds one), the model's distribution over
 * the next token at each position of the chunk's second half against the base's, as the mean KL divergence, the mean
 * ln(PPL(Q)/PPL(base)) and how often the two agree on the most likely token. So a quantized file's quality in Laneway
 * and in llama.cpp is measured against the same base, on the same positions.
 *
 * <p>The file: {@code "_logits_"}, then little-endian u32 n_ctx, i32 n_vocab, i32 n_chunk, the n_ctx · n_chunk i32
 * tokens, then per chunk n_ctx − 1 − n_ctx/2 rows of 2·⌈n_vocab/2⌉ + 4 u16: a float scale and a float least
 * log-prob, then per token a u16 q, its log-prob scale·q + least (q = 0: at or below least, at most 16 under the top).
 */
public final class KlDivergence {

    /** Sums over the positions measured, as llama-perplexity keeps them. */
    public static final class Result {
        private double nll;
        private double nllBase;
        private double kld;
        private double kld2;
        private long sameTop;
        private long count;

        public double meanKld() {
            return kld / count;
        }

        /** The standard error of the mean KL divergence. */
        public double kldUncertainty() {
            double mean = meanKld();
            double variance = kld2 / count - mean * mean;
            return variance > 0 && count > 10 ? Math.sqrt(variance / (count - 1)) : 0;
        }

        /** Mean ln(PPL(Q)/PPL(base)) over the positions. */
        public double logPplRatio() {
            return (nll - nllBase) / count;
        }

        /** The share of positions whose most likely token is the base's. */
        public double sameTop() {
            return (double) sameTop / count;
        }

        public long count() {
            return count;
        }
    }

    private KlDivergence() {
    }

    /**
     * Measures {@code model} against the base log-probabilities in {@code baseFile}, over its first {@code maxChunks}
     * chunks at most.
     *
     * @throws IOException when the file is not such a file, or its vocabulary is not the model's
     */
    public static Result measure(LanewayModel model, Path baseFile, int maxChunks) throws IOException {
        try (InputStream in = Files.newInputStream(baseFile)) {
            DataInputStream data = new DataInputStream(in);
            byte[] magic = data.readNBytes(8);
            if (!"_logits_".equals(new String(magic, StandardCharsets.US_ASCII))) {
                throw new IOException(baseFile + " is not a file of base log-probabilities (no _logits_ header)");
            }
            ByteBuffer head = little(data.readNBytes(12), 12, baseFile);
            int nCtx = head.getInt();
            int nVocab = head.getInt();
            int nChunk = head.getInt();
            int vocab = model.info().vocabSize();
            if (nVocab != vocab || nCtx < 4 || nChunk < 1 || (long) nCtx * nChunk * 4 > Files.size(baseFile)) {
                throw new IOException(baseFile + ": " + nChunk + " chunks of " + nCtx + " tokens over a vocabulary of "
                        + nVocab + " in " + Files.size(baseFile) + " bytes; the model's vocabulary has " + vocab);
            }
            ByteBuffer tokenBytes = little(data.readNBytes(4 * nCtx * nChunk), 4 * nCtx * nChunk, baseFile);
            int[] tokens = new int[nCtx * nChunk];
            tokenBytes.asIntBuffer().get(tokens);
            int[] bos = model.tokenize("", true, false);
            int first = nCtx / 2;
            int rows = nCtx - 1 - first;
            int stride = 2 * ((nVocab + 1) / 2) + 4;
            Result result = new Result();
            for (int c = 0; c < Math.min(nChunk, maxChunks); c++) {
                int[] chunk = Arrays.copyOfRange(tokens, c * nCtx, (c + 1) * nCtx);
                if (bos.length > 0) {
                    chunk[0] = bos[0];
                }
                ByteBuffer base = little(data.readNBytes(2 * rows * stride), 2 * rows * stride, baseFile);
                for (int r = 0; r < rows; r++) {
                    int pos = first + r;
                    float[] logits = model.nextTokenLogits(Arrays.copyOf(chunk, pos + 1));
                    add(result, logits, base, r * stride * 2, nVocab, chunk[pos + 1]);
                }
            }
            return result;
        }
    }

    /** One position, as llama-perplexity's log_softmax against the base's row at {@code at} adds it. */
    private static void add(Result result, float[] logits, ByteBuffer base, int at, int nVocab, int token) {
        float max = logits[0];
        int top = 0;
        for (int i = 1; i < nVocab; i++) {
            if (logits[i] > max) {
                max = logits[i];
                top = i;
            }
        }
        double sumExp = 0;
        for (int i = 0; i < nVocab; i++) {
            sumExp += Math.exp(logits[i] - max);
        }
        float logSumExp = (float) Math.log(sumExp);
        float scale = base.getFloat(at);
        float least = base.getFloat(at + 4);
        float nll = max + logSumExp - logits[token];
        float nllBase = -(scale * u16(base, at, token) + least);
        float norm = max + logSumExp;
        double kld = 0;
        int topBase = 0;
        float maxBase = 0;
        for (int i = 0; i < nVocab; i++) {
            float logBase = scale * u16(base, at, i) + least;
            if (i == 0 || logBase > maxBase) {
                maxBase = logBase;
                topBase = i;
            }
            if (logBase > -16f) {
                kld += Math.exp(logBase) * (logBase - logits[i] + norm);
            }
        }
        result.nll += nll;
        result.nllBase += nllBase;
        result.kld += kld;
        result.kld2 += kld * kld;
        result.sameTop += top == topBase ? 1 : 0;
        result.count++;
    }

    private static int u16(ByteBuffer row, int at, int token) {
        return Short.toUnsignedInt(row.getShort(at + 8 + 2 * token));
    }

    private static ByteBuffer little(byte[] bytes, int expected, Path file) throws IOException {
        if (bytes.length != expected) {
            throw new IOException(file + " ends early");
        }
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * {@code KlDivergence CONTAINER BASE_FILE [CHUNKS] [KEY=VALUE]...}: prints the mean KL divergence (± its standard
     * error), the mean ln(PPL(Q)/PPL(base)) and the same-top share of the container's model, opened with those
     * {@code --opt}s (e.g. {@code kv=q8}), against the base file, as one line of JSON.
     */
    public static void main(String[] args) throws IOException {
        java.util.List<String> positional = new java.util.ArrayList<>();
        RouteOptions options = RouteOptions.defaults();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq > 0) {
                options = options.withOpt(a.substring(0, eq), a.substring(eq + 1));
            } else {
                positional.add(a);
            }
        }
        if (positional.size() < 2 || positional.size() > 3) {
            System.err.println("usage: KlDivergence CONTAINER BASE_FILE [CHUNKS] [KEY=VALUE]...");
            System.exit(2);
        }
        int chunks = positional.size() > 2 ? Integer.parseInt(positional.get(2)) : Integer.MAX_VALUE;
        try (LanewayModel model = ModelAssembly.perOp(Path.of(positional.get(0)), options, "generic")) {
            Result r = measure(model, Path.of(positional.get(1)), chunks);
            System.out.printf(Locale.ROOT, "{\"kld\": %.6f, \"kld_error\": %.6f, \"ln_ppl_ratio\": %.6f, "
                    + "\"same_top\": %.5f, \"positions\": %d}%n", r.meanKld(), r.kldUncertainty(), r.logPplRatio(),
                    r.sameTop(), r.count());
        }
    }
}
