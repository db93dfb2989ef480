package dev.laneway.engine.tokenizer;

import dev.laneway.spi.ChatMessage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Python's string semantics, which differ from Java's in ways templates notice. */
class PythonMethodsTest {

    @Test
    void splitsLikePython() {
        assertEquals(List.of("a", "b", "c"), PythonMethods.split("  a b\t\nc  ", null, -1));
        assertEquals(List.of("a", "b c "), PythonMethods.split(" a b c ", null, 1));
        assertEquals(List.of("", "a", "", "b", ""), PythonMethods.split(",a,,b,", ",", -1));
        assertEquals(List.of("a", "b,c"), PythonMethods.split("a,b,c", ",", 1));
        assertEquals(List.of("x", "", "y"), PythonMethods.splitLines("x\n\r\ny\n"));
        assertEquals(List.of(), PythonMethods.splitLines(""));
    }

    @Test
    void stripsWhitespaceOrTheGivenCharacters() {
        assertEquals("x", PythonMethods.strip(" \n\u00a0x\t", null, true, true));
        assertEquals("x\n\n", PythonMethods.strip("\n\nx\n\n", "\n", true, false));
        assertEquals("<think>", PythonMethods.strip("<think>\n\n", "\n", false, true));
    }

    @Test
    void worksInsideTemplates() {
        String source = "{{ m[0].content.replace('a', 'o', 1) }}|{{ m[0].content.count('a') }}|"
                + "{{ m[0].content.find('n') }}|{{ '-'.join(m[0].content.split()) }}|{{ m[0].content.title() }}|"
                + "{{ m[0].content[-1] }}{{ m[0].content[0] }}|{{ m[0].content.lstrip('b') }}";
        ChatTemplate t = new ChatTemplate(source.replace("m[0]", "messages[0]"), "", "");
        assertEquals("bonana split|3|2|banana-split|Banana Split|tb|anana split",
                t.render(List.of(new ChatMessage("user", "banana split")), false));
    }
}
