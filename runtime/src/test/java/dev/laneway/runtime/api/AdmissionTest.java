package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.GenerationRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two streams and a queue of one, fed generations that wait for the test's word. (A request whose client leaves while
 * it waits never starts: the engine loop's line, EngineLoopTest.)
 */
class AdmissionTest {
    private final ScriptedModel model = new ScriptedModel();
    private final Admission scheduler = new Admission();

    @BeforeEach
    void open() {
        // no model loaded: the gate's jobs hold none awake
        scheduler.models = new dev.laneway.runtime.serve.ModelService();
        ScriptedModel.hold = new CountDownLatch(1);
        ScriptedModel.FINISHED.clear();
        scheduler.start(2, 1);
    }

    @AfterEach
    void close() {
        ScriptedModel.hold.countDown();
        scheduler.stop();
    }

    private GenerationJob heldJob(CompletableFuture<HttpReply> reply) {
        return job("hold:", 2, reply);
    }

    private GenerationJob job(String text, int maxTokens, CompletableFuture<HttpReply> reply) {
        GenerationParams params = new GenerationParams(OptionalInt.of(maxTokens), 0, 0, 1, 0, 1, OptionalLong.empty(),
                List.of(), 1, GenerationRequest.NO_LOGPROBS, false, false, false, 0, 0, java.util.Map.of(),
                Optional.empty(), true, false, false, -1, false, GenerationRequest.NO_SALT, 0, java.util.Map.of(),
                List.of());
        int[] prompt = model.tokenize(text, true, true);
        ReplyFormat format = new CompletionFormat(ReplyHeader.fresh("cmpl-", model, model.id()), false);
        return new GenerationJob(model, Optional.empty(), List.of(new ChoicePlan(0, prompt, maxTokens,
                params.sampling(0))),
                prompt.length, params, AnswerReading.PLAIN, new CollectedReply(format, reply, new ObjectMapper()),
                result -> { });
    }

    private static void await(IntSupplier count, int expected) throws InterruptedException {
        for (int i = 0; i < 400 && count.getAsInt() != expected; i++) {
            Thread.sleep(10);
        }
        assertEquals(expected, count.getAsInt());
    }

    @Test
    void runsOneGenerationPerStreamQueuesOneAndRefusesTheRest() throws Exception {
        List<CompletableFuture<HttpReply>> replies = List.of(new CompletableFuture<>(), new CompletableFuture<>(),
                new CompletableFuture<>());
        scheduler.submit(heldJob(replies.get(0)));
        scheduler.submit(heldJob(replies.get(1)));
        await(scheduler::running, 2);
        scheduler.submit(heldJob(replies.get(2)));
        assertEquals(1, scheduler.queued());
        ApiException refused = assertThrows(ApiException.class, () -> scheduler.submit(heldJob(
                new CompletableFuture<>())));
        assertEquals(503, refused.status());
        assertEquals(1, refused.retryAfterSeconds().getAsInt());
        assertEquals("all 2 streams are busy and 1 requests are already waiting; retry later",
                refused.getMessage());

        ScriptedModel.hold.countDown();
        for (CompletableFuture<HttpReply> reply : replies) {
            HttpReply done = reply.get(10, TimeUnit.SECONDS);
            assertEquals(200, done.status());
            assertEquals("hh", new ObjectMapper().readTree(done.body()).at("/choices/0/text").asText(),
                    new String(done.body(), StandardCharsets.UTF_8));
        }
        await(scheduler::running, 0);
    }

    /**
     * Told to stop, the gate refuses new requests at once and lets the admitted ones (two running, one waiting)
     * finish within the grace period.
     */
    @Test
    void drainingRefusesNewRequestsAndLetsAdmittedOnesFinish() throws Exception {
        List<CompletableFuture<HttpReply>> replies = List.of(new CompletableFuture<>(), new CompletableFuture<>(),
                new CompletableFuture<>());
        for (CompletableFuture<HttpReply> reply : replies) {
            scheduler.submit(heldJob(reply));
        }
        CompletableFuture<Void> drained = CompletableFuture.runAsync(() -> scheduler.drain(Duration.ofSeconds(30)));
        await(() -> {
            try {
                scheduler.submit(heldJob(new CompletableFuture<>()));
                return 0;
            } catch (ApiException refused) {
                return refused.body().error().code().equals("shutting_down") ? 1 : 2;
            }
        }, 1);
        assertEquals(false, drained.isDone(), "draining waits for the admitted requests");
        ScriptedModel.hold.countDown();
        drained.get(10, TimeUnit.SECONDS);
        for (CompletableFuture<HttpReply> reply : replies) {
            assertEquals(200, reply.get(1, TimeUnit.SECONDS).status());
        }
        assertEquals(0, scheduler.running() + scheduler.queued());
    }

    /** What still runs when the grace period is over is ended, and its client told so with a 503. */
    @Test
    void requestsStillRunningAfterTheGracePeriodAreEndedWithAnError() throws Exception {
        List<CompletableFuture<HttpReply>> replies = List.of(new CompletableFuture<>(), new CompletableFuture<>(),
                new CompletableFuture<>());
        for (CompletableFuture<HttpReply> reply : replies) {
            scheduler.submit(job("forever:", 1_000_000, reply));
        }
        long start = System.nanoTime();
        scheduler.drain(Duration.ofMillis(300));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMillis >= 300 && tookMillis < 5_000, "drained in " + tookMillis + " ms");
        for (CompletableFuture<HttpReply> reply : replies) {
            HttpReply ended = reply.get(1, TimeUnit.SECONDS);
            assertEquals(503, ended.status());
            assertEquals("shutting_down", new ObjectMapper().readTree(ended.body()).at("/error/code").asText());
        }
        assertEquals(0, scheduler.running() + scheduler.queued());
    }
}
