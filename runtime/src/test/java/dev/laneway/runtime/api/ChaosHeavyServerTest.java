package dev.laneway.runtime.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A device that keeps failing (one kernel run in 20 times out), 200 greedy requests from four clients that do not
 * wait: no wrong answer and no crash. Steps that fail their whole retry budget take the device out of service, so
 * most requests are refused at once with 503 {@code device_unavailable} and {@code Retry-After} rather than each
 * spending a budget on it; probes put it back for a while; whatever is answered is exact, and no context is left.
 */
@QuarkusTest
@TestProfile(ChaosProfiles.Heavy.class)
class ChaosHeavyServerTest {
    private static final int REQUESTS = 200;
    private static final int CLIENTS = 4;
    private static final int TOKENS = 16;

    @Test
    void aDeviceThatKeepsFailingIsTakenOutAndNoAnswerIsWrong() throws Exception {
        StoriesProfile.awaitReady();
        Golden.Record golden = Golden.stories260K().get(0);
        String ids = Arrays.stream(Arrays.copyOf(golden.completionIds(), TOKENS)).mapToObj(Integer::toString)
                .collect(Collectors.joining(","));
        String expected = StoriesServerTest.post("/detokenize", "{\"tokens\":[" + ids + "]}").then().statusCode(200)
                .extract().path("content");
        AtomicInteger exact = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        List<Future<?>> runs = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            runs.add(clients.submit(() -> {
                while (next.getAndIncrement() < REQUESTS) {
                    Response r = StoriesServerTest.post("/v1/completions", "{\"prompt\":\"" + golden.prompt()
                            + "\",\"max_tokens\":" + TOKENS + ",\"temperature\":0}");
                    if (r.statusCode() == 200) {
                        assertEquals(expected, r.path("choices[0].text"));
                        exact.incrementAndGet();
                    } else {
                        assertEquals(503, r.statusCode(), r.asString());
                        assertEquals("device_error", r.path("error.type"), r.asString());
                        if (r.path("error.code").equals("device_unavailable")) {
                            assertTrue(Integer.parseInt(r.header("Retry-After")) >= 1, r.asString());
                            refused.incrementAndGet();
                        } else {
                            assertEquals("device_fault", r.path("error.code"), r.asString());
                            failed.incrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : runs) {
            f.get();
        }
        clients.shutdown();
        assertEquals(REQUESTS, exact.get() + failed.get() + refused.get());
        assertTrue(refused.get() > failed.get(), "the breaker refused more than the device failed: " + refused.get()
                + " refused, " + failed.get() + " failed");
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"), "no context leaks");
        given().get("/q/health/live").then().statusCode(200);
        System.out.printf("chaos p=0.05: %d requests, %d exact, %d failed on the device, %d refused out of service%n",
                REQUESTS, exact.get(), failed.get(), refused.get());
    }
}
