package dev.laneway.spi;

/**
 * A stream's KV cache saved to or restored from a file: {@code tokens} positions, {@code bytes} bytes of file, in
 * {@code millis} milliseconds.
 */
public record SlotTransfer(int tokens, long bytes, double millis) {
}
