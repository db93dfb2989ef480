package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LoRA adapters served as model ids of their own over stories260K ({@link StoriesProfile.Lora}): each answers with its
 * adapter applied, the base model with llama-server's per-request and server-wide scales as well; clients on the
 * base model and on either adapter at once each get the answer they get alone; adapters load and unload at run time
 * from the adapter directory only; and {@code vllm:lora_requests_info} names the adapters running.
 */
@QuarkusTest
@TestProfile(StoriesProfile.Lora.class)
@TestMethodOrder(MethodOrderer.MethodName.class)
class StoriesLoraTest {
    private static final String BASE = StoriesProfile.ALIAS;
    private static final String PROMPT = "Once upon a time";

    @io.quarkus.test.common.http.TestHTTPResource("/")
    java.net.URL server;

    @BeforeEach
    void awaitReady() throws InterruptedException {
        StoriesProfile.awaitReady();
    }

    private static Response complete(String model, String extra) {
        return given().contentType("application/json").body("{\"model\":\"" + model + "\",\"prompt\":\"" + PROMPT
                + "\",\"max_tokens\":24,\"temperature\":0" + extra + "}").post("/v1/completions");
    }

    private static String answer(String model, String extra) {
        Response r = complete(model, extra);
        assertEquals(200, r.statusCode(), model + extra + ": " + r.asString());
        return r.path("choices[0].text");
    }

    private static Response post(String path, String body) {
        return given().contentType("application/json").body(body).post(path);
    }

    @Test
    void a_theAdaptersAreListedAndEachAnswersWithItsAdapter() {
        Response list = given().get("/v1/models");
        assertEquals(List.of(BASE, "a1", "a2"), list.path("data.id"));
        assertEquals(BASE, list.path("data[1].parent"));
        assertEquals("a1.gguf", list.path("data[1].root"));
        assertEquals("loaded", list.path("data[2].status.value"));
        String base = answer(BASE, "");
        String a1 = answer("a1", "");
        String a2 = answer("a2", "");
        assertNotEquals(base, a1);
        assertNotEquals(base, a2);
        assertNotEquals(a1, a2);
        assertEquals("a1", complete("a1", "").path("model"));
        // llama-server's per-request scales on the base model give the same answers
        assertEquals(a1, answer(BASE, ",\"lora\":[{\"id\":0,\"scale\":1}]"));
        assertEquals(a2, answer(BASE, ",\"lora\":[{\"id\":1,\"scale\":1.0}]"));
        assertEquals(base, answer(BASE, ",\"lora\":[{\"id\":0,\"scale\":0}]"));
        // and the chat endpoint applies the adapter too
        String chat = "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":16,"
                + "\"temperature\":0}";
        String baseChat = post("/v1/chat/completions", chat.formatted(BASE)).path("choices[0].message.content");
        String a1Chat = post("/v1/chat/completions", chat.formatted("a1")).path("choices[0].message.content");
        assertNotEquals(baseChat, a1Chat);
    }

    /** The official OpenAI client asks for the adapter by its model id, as it would of vLLM. */
    @Test
    void aa_theOpenAiClientAsksForTheAdapter() throws Exception {
        NodeSdk.Run run = NodeSdk.lora(server.toString() + "v1", "a2", PROMPT);
        assertEquals(0, run.exitCode(), run.output());
        String line = run.output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
        var seen = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
        assertEquals(BASE, seen.get("parent").asText());
        assertEquals(answer("a2", ""), seen.get("text").asText());
    }

    @Test
    void b_badLoraFieldsAreRefusedByName() {
        Response r = complete(BASE, ",\"lora\":[{\"id\":7,\"scale\":1}]");
        assertEquals(400, r.statusCode());
        assertEquals("lora", r.path("error.param"));
        assertTrue(r.path("error.message").toString().contains("names adapter 7"), r.asString());
        r = complete("a1", ",\"lora\":[{\"id\":1,\"scale\":1}]");
        assertEquals(400, r.statusCode());
        assertTrue(r.path("error.message").toString().contains("model names the adapter a1"), r.asString());
        r = complete(BASE, ",\"lora\":[{\"id\":0}]");
        assertEquals(400, r.statusCode());
        r = post("/v1/embeddings", "{\"model\":\"a1\",\"input\":\"hello\"}");
        assertEquals(400, r.statusCode());
        assertTrue(r.path("error.message").toString().contains("a1 is a LoRA adapter"), r.asString());
        assertEquals(404, complete("a9", "").statusCode());
    }

    /** Twelve clients at once, four each on the base model, a1 and a2: each gets the answer it gets alone. */
    @Test
    void c_clientsOnTheBaseModelAndBothAdaptersAtOnceEachGetTheirOwnAnswer() throws Exception {
        List<String> models = List.of(BASE, "a1", "a2");
        Map<String, String> alone = Map.of(BASE, answer(BASE, ""), "a1", answer("a1", ""), "a2", answer("a2", ""));
        ExecutorService clients = Executors.newFixedThreadPool(12);
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                String model = models.get(i % 3);
                answers.add(clients.submit(() -> answer(model, "")));
            }
            for (int i = 0; i < 12; i++) {
                assertEquals(alone.get(models.get(i % 3)), answers.get(i).get(60, TimeUnit.SECONDS), "client " + i);
            }
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void d_adaptersLoadAndUnloadAtRunTimeFromTheAdapterDirectoryOnly() {
        Response r = post("/v1/load_lora_adapter", "{\"lora_name\":\"a3\",\"lora_path\":\"a3.gguf\"}");
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals("Success: LoRA adapter 'a3' added successfully.", r.asString());
        String a3 = answer("a3", "");
        assertNotEquals(answer(BASE, ""), a3);
        assertEquals(List.of(BASE, "a1", "a2", "a3"), given().get("/v1/models").path("data.id"));
        assertEquals(400, post("/v1/load_lora_adapter", "{\"lora_name\":\"a3\",\"lora_path\":\"a1.gguf\"}")
                .statusCode(), "a loaded name is replaced only in place");
        assertEquals(200, post("/v1/load_lora_adapter", "{\"lora_name\":\"a3\",\"lora_path\":\"a1.gguf\","
                + "\"load_inplace\":true}").statusCode());
        assertEquals(answer("a1", ""), answer("a3", ""));
        for (String path : List.of("../a1.gguf", "/etc/hostname", StoriesProfile.model().toString(), "nothing.gguf")) {
            r = post("/v1/load_lora_adapter", "{\"lora_name\":\"x\",\"lora_path\":\"" + path + "\"}");
            assertEquals(400, r.statusCode(), path + ": " + r.asString());
            assertEquals("lora_path", r.path("error.param"));
            assertTrue(!r.asString().contains(StoriesProfile.Lora.DIR.toString()), r.asString());
        }
        r = post("/v1/load_lora_adapter", "{\"lora_name\":\"x\",\"lora_path\":\"notes.gguf\"}");
        assertEquals(400, r.statusCode());
        assertTrue(r.path("error.message").toString().contains("cannot load adapter 'x'"), r.asString());
        r = post("/v1/load_lora_adapter", "{\"lora_name\":\"" + BASE + "\",\"lora_path\":\"a1.gguf\"}");
        assertEquals(400, r.statusCode(), "a model's name cannot be an adapter's");
        r = post("/v1/unload_lora_adapter", "{\"lora_name\":\"a3\"}");
        assertEquals(200, r.statusCode());
        assertEquals("Success: LoRA adapter 'a3' removed successfully.", r.asString());
        assertEquals(404, complete("a3", "").statusCode());
        assertEquals(404, post("/v1/unload_lora_adapter", "{\"lora_name\":\"a3\"}").statusCode());
    }

    /** llama-server's /lora-adapters: the base model's adapters by number, and the scales its requests apply. */
    @Test
    void e_serverScalesApplyToTheBaseModel() {
        String base = answer(BASE, "");
        Response list = given().get("/lora-adapters");
        assertEquals(List.of(0, 1), list.path("id"));
        assertEquals(List.of("a1.gguf", "a2.gguf"), list.path("path"));
        assertEquals(List.of(0.0f, 0.0f), list.path("scale"));
        assertEquals(200, post("/lora-adapters", "[{\"id\":0,\"scale\":1}]").statusCode());
        assertEquals(1.0f, (Float) given().get("/lora-adapters").path("scale[0]"));
        assertEquals(answer("a1", ""), answer(BASE, ""));
        assertEquals(base, answer(BASE, ",\"lora\":[{\"id\":0,\"scale\":0}]"), "the request's scale wins");
        assertEquals(200, post("/lora-adapters", "[]").statusCode());
        assertEquals(base, answer(BASE, ""));
        assertEquals(400, post("/lora-adapters", "[{\"id\":5,\"scale\":1}]").statusCode());
    }

    /**
     * While clients generate with a1, {@code vllm:lora_requests_info} names it running (and the requests beyond the
     * streams waiting); once they end, none.
     */
    @Test
    void f_theGatewayGaugeNamesTheRunningAdapters() throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(6);
        try {
            List<Future<Integer>> runs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String model = i < 5 ? "a1" : "a2";
                runs.add(clients.submit(() -> post("/v1/completions", "{\"model\":\"" + model + "\",\"prompt\":\""
                        + PROMPT + "\",\"max_tokens\":400,\"ignore_eos\":true}").statusCode()));
            }
            ScriptedStateTest.Sample seen = null;
            for (int i = 0; i < 2000 && (seen == null || !seen.labels().get("running_lora_adapters").contains("a1"));
                 i++) {
                seen = ScriptedStateTest.prometheus(given().get("/metrics").asString()).get("vllm:lora_requests_info");
            }
            assertTrue(seen.labels().get("running_lora_adapters").contains("a1"), seen.toString());
            assertEquals("2", seen.labels().get("max_lora"));
            for (Future<Integer> run : runs) {
                assertEquals(200, run.get(120, TimeUnit.SECONDS));
            }
        } finally {
            clients.shutdownNow();
        }
        Map<String, String> idle = ScriptedStateTest.prometheus(given().get("/metrics").asString())
                .get("vllm:lora_requests_info").labels();
        assertEquals(Map.of("max_lora", "2", "running_lora_adapters", "", "waiting_lora_adapters", ""), idle);
    }
}
