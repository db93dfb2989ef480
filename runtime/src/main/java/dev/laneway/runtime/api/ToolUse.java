package dev.laneway.runtime.api;

/**
 * A chat request that offers tools: the format the model writes its calls in, and whether one answer may make
 * several.
 */
record ToolUse(ToolCallFormat format, boolean parallel) {
}
