package dev.laneway.engine.gguf;

import dev.laneway.engine.format.FormatException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Reads the little-endian header of a GGUF file through a window that refills from the channel. Every length read
 * from the file is checked against the bytes the file still holds before anything is allocated for it, so a corrupt
 * length gives a {@link FormatException} that names the offset, never an out-of-memory error.
 */
final class GgufReader {
    private static final int WINDOW = 1 << 20;

    private final Path file;
    private final FileChannel channel;
    private final long size;
    private final ByteBuffer window = ByteBuffer.allocate(WINDOW).order(ByteOrder.LITTLE_ENDIAN);
    /** File offset of window position 0. */
    private long windowStart;

    GgufReader(Path file, FileChannel channel) throws IOException {
        this.file = file;
        this.channel = channel;
        this.size = channel.size();
        window.limit(0);
    }

    Path file() {
        return file;
    }

    long size() {
        return size;
    }

    /** The file offset of the next byte to read. */
    long position() {
        return windowStart + window.position();
    }

    long remaining() {
        return size - position();
    }

    /** Fails unless {@code n} more bytes are in the file. */
    void require(long n, String what) throws FormatException {
        if (n < 0 || n > remaining()) {
            throw new FormatException(file, position(), "truncated: " + what + " needs " + Long.toUnsignedString(n)
                    + " bytes, the file has " + remaining() + " left");
        }
    }

    /** Makes sure the window holds the next {@code n} bytes, {@code n <= WINDOW}. */
    private void fill(int n, String what) throws IOException {
        require(n, what);
        if (window.remaining() >= n) {
            return;
        }
        long pos = position();
        window.compact();
        windowStart = pos;
        while (window.position() < n) {
            if (channel.read(window, pos + window.position()) < 0) {
                throw new FormatException(file, pos, "unexpected end of file reading " + what);
            }
        }
        window.flip();
    }

    byte i8(String what) throws IOException {
        fill(1, what);
        return window.get();
    }

    short i16(String what) throws IOException {
        fill(2, what);
        return window.getShort();
    }

    int i32(String what) throws IOException {
        fill(4, what);
        return window.getInt();
    }

    long i64(String what) throws IOException {
        fill(8, what);
        return window.getLong();
    }

    float f32(String what) throws IOException {
        fill(4, what);
        return window.getFloat();
    }

    double f64(String what) throws IOException {
        fill(8, what);
        return window.getDouble();
    }

    /** {@code gguf_string_t}: a uint64 length and that many UTF-8 bytes. */
    String string(String what) throws IOException {
        long at = position();
        long length = i64(what + " length");
        if (length < 0 || length > remaining()) {
            throw new FormatException(file, at, "truncated: " + what + " claims " + Long.toUnsignedString(length)
                    + " bytes, the file has " + remaining() + " left");
        }
        if (length > Integer.MAX_VALUE - 8) {
            throw new FormatException(file, at, what + " is " + length + " bytes long; strings are limited to 2 GiB");
        }
        byte[] bytes = new byte[(int) length];
        int done = 0;
        while (done < bytes.length) {
            int chunk = Math.min(WINDOW, bytes.length - done);
            fill(chunk, what);
            window.get(bytes, done, chunk);
            done += chunk;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            // A few vocabularies hold token texts that are not valid UTF-8 on their own; keep them, with
            // replacement characters where the bytes are broken.
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** Skips to the next multiple of {@code alignment}. */
    void align(long alignment) throws IOException {
        long pos = position();
        long next = (pos + alignment - 1) / alignment * alignment;
        require(next - pos, "alignment padding");
        seek(next);
    }

    void seek(long offset) {
        long inWindow = offset - windowStart;
        if (inWindow >= 0 && inWindow <= window.limit()) {
            window.position((int) inWindow);
        } else {
            windowStart = offset;
            window.clear();
            window.limit(0);
        }
    }
}
