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
 * 1,000 generations from four concurrent clients on two streams while the device times out at random (one kernel run
 * in 500): no crash; a faulted step runs again on a fresh context within its retry budget, so the faults cost
 * latency, not requests: at least 99% come out token-identical to the fault-free output, any other is a device error;
 * and no context or thread is left behind.
 */
@QuarkusTest
@TestProfile(ChaosProfiles.Random.class)
class ChaosRandomServerTest {
    private static final int GENERATIONS = 1000;
    private static final int CLIENTS = 4;
    private static final int TOKENS = 16;

    @Test
    void aThousandGenerationsUnderRandomDeviceFaults() throws Exception {
        StoriesProfile.awaitReady();
        List<Golden.Record> golden = Golden.stories260K();
        List<String> expected = new ArrayList<>();
        for (Golden.Record r : golden) {
            String ids = Arrays.stream(Arrays.copyOf(r.completionIds(), TOKENS)).mapToObj(Integer::toString)
                    .collect(Collectors.joining(","));
            expected.add(StoriesServerTest.post("/detokenize", "{\"tokens\":[" + ids + "]}").then().statusCode(200)
                    .extract().path("content"));
        }
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger faulted = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        // The first fifth warms up the server's thread pools; after it, the thread count must stay flat.
        runClients(clients, next, GENERATIONS / 5, golden, expected, ok, faulted);
        int threadsWarm = Thread.getAllStackTraces().size();
        runClients(clients, next, GENERATIONS, golden, expected, ok, faulted);
        clients.shutdown();
        int threadsAfter = Thread.getAllStackTraces().size();
        assertEquals(GENERATIONS, ok.get() + faulted.get());
        assertTrue(faulted.get() <= GENERATIONS / 100, "at least 99% exact: " + faulted.get() + " failed");
        long recorded = Long.parseLong(given().get("/v1/diagnostics").jsonPath().getString("state.faults"));
        assertTrue(recorded > 50, "faults happened and were retried away: " + recorded + " faults, "
                + faulted.get() + " failed requests");
        assertEquals("0", given().get("/v1/diagnostics").jsonPath().getString("state.contexts"), "no context leaks");
        assertTrue(threadsAfter <= threadsWarm, "no thread leak: " + threadsWarm + " -> " + threadsAfter);
        given().get("/health").then().statusCode(200);
        System.out.printf("chaos: %d generations, %d faults, %d failed, %d exact%n", GENERATIONS, recorded,
                faulted.get(), ok.get());
    }

    /** Four clients take request numbers from {@code next} until {@code until}. */
    private static void runClients(ExecutorService clients, AtomicInteger next, int until, List<Golden.Record> golden,
                                   List<String> expected, AtomicInteger ok, AtomicInteger faulted) throws Exception {
        List<Future<?>> runs = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            runs.add(clients.submit(() -> {
                for (int i = next.getAndIncrement(); i < until; i = next.getAndIncrement()) {
                    int k = i % golden.size();
                    Response r = StoriesServerTest.post("/v1/completions", "{\"prompt\":\"" + golden.get(k).prompt()
                            + "\",\"max_tokens\":" + TOKENS + ",\"temperature\":0}");
                    if (r.statusCode() == 200) {
                        assertEquals(expected.get(k), r.path("choices[0].text"), golden.get(k).prompt());
                        ok.incrementAndGet();
                    } else {
                        assertEquals(503, r.statusCode(), r.asString());
                        assertEquals("device_error", r.path("error.type"), r.asString());
                        faulted.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : runs) {
            f.get();
        }
        next.set(until);
    }
}
