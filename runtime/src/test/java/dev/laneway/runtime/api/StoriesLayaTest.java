package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --laya} end to end on the real stories260K model through the generic route: the start-up lines, a device
 * dropped, the decision in the header of every generation response and in one log line per new decision, a
 * conversation decided once, and the 1,024-byte rule.
 */
@QuarkusTest
@TestProfile(StoriesLayaProfile.class)
class StoriesLayaTest {
    private static final String HEADER = "X-Laneway-Route";
    private static final String CODE_CHAT = "[{\"role\":\"system\",\"content\":\"You are a coding assistant.\"},"
            + "{\"role\":\"user\",\"content\":\"Write a Python function that reverses a list\"}";

    @BeforeEach
    void awaitModel() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    private static List<String> layaLines() throws IOException {
        return Files.readAllLines(StoriesLayaProfile.log()).stream()
                .filter(l -> l.contains("laya: "))
                .map(l -> l.substring(l.indexOf("laya: ")))
                .toList();
    }

    private static long count(String line) throws IOException {
        return layaLines().stream().filter(line::equals).count();
    }

    @Test
    void startUpNamesTheCheckpointThePolicyAndTheDroppedDevice() throws IOException {
        List<String> lines = layaLines();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("laya: device npu dropped from the candidates: "
                + "no device named 'npu'")), lines.toString());
        assertTrue(lines.contains("laya: checkpoint " + StoriesLayaProfile.checkpoint() + ", policy min_confidence "
                + "0.16, default cpu, code -> " + StoriesLayaProfile.CODE_DEVICE + " (a device of its own), prose -> "
                + "cpu, short -> npu, long_doc -> cpu; classifier heuristic; candidates cpu, "
                + StoriesLayaProfile.CODE_DEVICE), lines.toString());
    }

    @Test
    void aConversationIsDecidedOnceAndEveryTurnCarriesTheDecision() throws IOException {
        String decision = "code 0.24 " + StoriesLayaProfile.CODE_DEVICE;
        given().contentType("application/json").body("{\"messages\":" + CODE_CHAT + "],\"max_tokens\":4}")
                .post("/v1/chat/completions").then()
                .statusCode(200)
                .header(HEADER, equalTo(decision))
                .body("object", equalTo("chat.completion"));
        String secondTurn = CODE_CHAT + ",{\"role\":\"assistant\",\"content\":\"Once upon a time\"},"
                + "{\"role\":\"user\",\"content\":\"Now tell me a story about it\"}]";
        given().contentType("application/json").body("{\"messages\":" + secondTurn + ",\"max_tokens\":4,"
                        + "\"stream\":true}")
                .post("/v1/chat/completions").then()
                .statusCode(200)
                .contentType(startsWith("text/event-stream"))
                .header(HEADER, equalTo(decision));
        assertEquals(1, count("laya: " + decision), "the second turn is neither scored nor logged again");
    }

    @Test
    void aPromptOf1024BytesIsALongDocument() throws IOException {
        String prompt = "Once upon a time there was a cat. ".repeat(30);
        prompt = prompt + "x".repeat(1024 - prompt.length());
        given().contentType("application/json").body("{\"prompt\":\"" + prompt + "\",\"max_tokens\":2}")
                .post("/v1/completions").then()
                .statusCode(200)
                .header(HEADER, equalTo("long_doc 1.00 cpu"));
        given().contentType("application/json").body("{\"prompt\":\"" + prompt.substring(1) + "\",\"max_tokens\":2}")
                .post("/v1/completions").then()
                .statusCode(200)
                .header(HEADER, startsWith("prose "));
        assertTrue(count("laya: long_doc 1.00 cpu") >= 1);
    }

    @Test
    void modelsListsTheCandidates() {
        given().get("/v1/models").then().statusCode(200)
                .body("data[0].id", equalTo(StoriesProfile.ALIAS))
                .body("data[0].device", equalTo("cpu"))
                .body("data[0].metadata['laya.candidates']", equalTo("cpu, " + StoriesLayaProfile.CODE_DEVICE));
        given().get("/q/health/ready").then().statusCode(200);
    }
}
