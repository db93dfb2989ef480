package dev.laneway.engine.plan;

import java.util.List;
import java.util.Map;

/**
 * The op plan the per-op forward executes ({@code plan.json}, documented in {@code docs/plan.md}): buffers sized by
 * symbolic dimensions, a prologue run once per batch, the ops of one layer run for every layer, and an epilogue that
 * ends in the logits.
 *
 * @param buffers  buffer name → its dimension per token: {@code hidden}, {@code q}, {@code kv}, {@code ffn} or
 *                 {@code vocab}
 * @param prologue ops before the first layer
 * @param layer    ops of every layer; tensor names hold {@code {L}}
 * @param epilogue ops after the last layer
 * @param logits   the buffer that holds the logits at the end
 */
public record Plan(Map<String, Dim> buffers, List<Op> prologue, List<Op> layer, List<Op> epilogue, String logits) {
    /** The {@code format} value of a plan file. */
    public static final String FORMAT = "laneway-plan";
    /** The plan format version this build reads and writes. */
    public static final int VERSION = 1;

    public Plan {
        buffers = Map.copyOf(buffers);
        prologue = List.copyOf(prologue);
        layer = List.copyOf(layer);
        epilogue = List.copyOf(epilogue);
    }

    /** The per-token sizes a buffer can have. */
    public enum Dim {
        HIDDEN, Q, KV, FFN, VOCAB, EXPERTS;

        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
