package dev.laneway.engine.plan;

import dev.laneway.engine.format.FormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A plan.json that is not JSON text is refused naming the file, whichever way it is read. */
class PlanJsonTest {
    @TempDir
    Path dir;

    @Test
    void refusesTextThatIsNotUtf8AsInvalidJson() throws IOException {
        Path file = Files.write(dir.resolve("plan.json"), new byte[] {'{', '"', (byte) 0xFF, '"', ':', '1', '}'});
        for (FormatException e : new FormatException[] {assertThrows(FormatException.class, () -> PlanJson.read(file)),
                assertThrows(FormatException.class, () -> PlanJson.readIfLaneways(file))}) {
            assertTrue(e.getMessage().startsWith(file + ": not valid JSON: Invalid UTF-8"), e.getMessage());
        }
    }

    @Test
    void refusesAnEmptyFile() throws IOException {
        Path file = Files.write(dir.resolve("plan.json"), new byte[0]);
        FormatException e = assertThrows(FormatException.class, () -> PlanJson.readIfLaneways(file));
        assertEquals(file + ": empty, expected a JSON object", e.getMessage());
    }
}
