package dev.laneway.runtime.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.spi.GenerationRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
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

/**
 * Two streams and a queue of one, fed generations that wait for the test's word. (A request whose client leaves while
 * it waits never starts: the engine loop's line, EngineLoopTest.)
 */
class AdmissionTest {
    private final ScriptedModel model = new ScriptedModel();
    private final Admission scheduler = new Admission();

    @BeforeEach
    void open() {
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
        GenerationParams params = new GenerationParams(OptionalInt.of(2), 0, 0, 1, 0, 1, OptionalLong.empty(),
                List.of(), 1, GenerationRequest.NO_LOGPROBS, false, false, false, 0, 0, java.util.Map.of(),
                Optional.empty(), true, false, false, -1, false, GenerationRequest.NO_SALT);
        int[] prompt = model.tokenize("hold:", true, true);
        ReplyFormat format = new CompletionFormat(ReplyHeader.fresh("cmpl-", model), false);
        return new GenerationJob(model, Optional.empty(), List.of(new ChoicePlan(0, prompt, 2, params.sampling(0))),
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
}
