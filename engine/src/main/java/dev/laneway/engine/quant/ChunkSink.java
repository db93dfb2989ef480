package dev.laneway.engine.quant;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Receives encoded bytes chunk by chunk, e.g. to write them to a file. The chunk is reused once this returns. */
@FunctionalInterface
public interface ChunkSink {
    void accept(ByteBuffer chunk) throws IOException;
}
