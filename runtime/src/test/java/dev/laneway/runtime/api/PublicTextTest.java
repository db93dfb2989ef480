package dev.laneway.runtime.api;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PublicTextTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "cannot serve /home/u/models/x.gguf: bad magic | cannot serve x.gguf: bad magic",
            "`'/root/.cache/laneway/q4nx/a-1/model.q4nx' is short` | `'model.q4nx' is short`",
            "lock=/tmp/laneway.lock held (/var/run/a/b) | lock=laneway.lock held (b)",
            "/abs/first and then [/x/y/z] | first and then [z]",
            "relative a/b/c.gguf, a ratio 1/2, a URL http://host/a/b | relative a/b/c.gguf, a ratio 1/2, a URL http://host/a/b",
            "a lone /name stays | a lone /name stays"})
    void absolutePathsKeepOnlyTheirLastName(String text, String shown) {
        assertEquals(shown, PublicText.of(text));
    }
}
