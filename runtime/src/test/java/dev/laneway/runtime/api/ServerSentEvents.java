package dev.laneway.runtime.api;

import io.restassured.path.json.JsonPath;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A test tool: splits an event-stream body into its {@code data:} payloads, checking the framing on the way. */
final class ServerSentEvents {
    private ServerSentEvents() {
    }

    /** The payloads of every event, in order; each event must be exactly {@code data: PAYLOAD\n\n}. */
    static List<String> payloads(String body) {
        assertTrue(body.endsWith("\n\n"), "the stream ends with a blank line");
        List<String> payloads = new ArrayList<>();
        for (String event : body.substring(0, body.length() - 2).split("\n\n", -1)) {
            assertTrue(event.startsWith("data: "), "every event is 'data: ...': " + event);
            assertTrue(!event.contains("\n"), "every event is one line: " + event);
            payloads.add(event.substring("data: ".length()));
        }
        return payloads;
    }

    /** The JSON chunks of a stream that ended with {@code [DONE]}. */
    static List<JsonPath> chunks(String body) {
        List<String> payloads = payloads(body);
        assertEquals("[DONE]", payloads.get(payloads.size() - 1), "the stream ends with [DONE]");
        return payloads.subList(0, payloads.size() - 1).stream().map(JsonPath::new).toList();
    }

    /** The text of choice 0 of a completions or chat stream, concatenated. */
    static String text(List<JsonPath> chunks) {
        StringBuilder text = new StringBuilder();
        for (JsonPath chunk : chunks) {
            if (chunk.getList("choices").isEmpty()) {
                continue;
            }
            String piece = chunk.getString("object").equals("text_completion")
                    ? chunk.getString("choices[0].text") : chunk.getString("choices[0].delta.content");
            if (piece != null) {
                text.append(piece);
            }
        }
        return text.toString();
    }
}
