package dev.laneway.engine.laya;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.RouteDecision;
import dev.laneway.spi.RouterException;
import dev.laneway.spi.RoutingInput;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LayaRouterTest {
    private static final RoutePolicy POLICY = new RoutePolicy(0.16, "cpu", Map.of(
            RequestClass.CODE, new RoutePolicy.ClassRoute("npu", "lane kernels"),
            RequestClass.LONG_DOC, new RoutePolicy.ClassRoute("gpu", "")));

    /** A classifier that says what it is told and counts its calls. */
    private static final class Scripted implements Classifier {
        final List<String> states = new ArrayList<>();
        Classification answer = new Classification(RequestClass.CODE, 0.83);
        boolean fail;

        @Override
        public Classification classify(String state) {
            states.add(state);
            if (fail) {
                throw new RouterException("laya: the scorer failed on this request: device cpu timed out");
            }
            return answer;
        }

        @Override
        public String describe() {
            return "scripted";
        }
    }

    private final Scripted classifier = new Scripted();
    private final List<String> log = new ArrayList<>();

    private LayaRouter router(String... candidates) {
        return new LayaRouter(Path.of("ckpt"), POLICY, classifier, "stories", List.of(candidates), log::add);
    }

    private static RoutingInput chat(String... roleAndContent) {
        List<ChatMessage> messages = new ArrayList<>();
        for (int i = 0; i < roleAndContent.length; i += 2) {
            messages.add(new ChatMessage(roleAndContent[i], roleAndContent[i + 1]));
        }
        return RoutingInput.chat(messages);
    }

    @Test
    void logsAStartUpLineNamingCheckpointPolicyClassifierAndCandidates() {
        router("cpu", "npu");
        assertEquals(List.of("laya: checkpoint ckpt, policy min_confidence 0.16, default cpu, code -> npu "
                + "(lane kernels), long_doc -> gpu; classifier scripted; candidates cpu, npu"), log);
    }

    @Test
    void decidesByThePolicyAndLogsEachNewDecision() {
        LayaRouter router = router("cpu", "npu");
        log.clear();
        RouteDecision d = router.route(RoutingInput.prompt("def f(): pass"));
        assertEquals(new RouteDecision("code", 0.83, "npu"), d);
        assertEquals("code 0.83 npu", d.describe());
        classifier.answer = new Classification(RequestClass.CODE, 0.15);
        assertEquals("code 0.15 cpu", router.route(RoutingInput.prompt("x")).describe(), "below the threshold");
        assertEquals(List.of("laya: code 0.83 npu", "laya: code 0.15 cpu"), log);
    }

    @Test
    void withOneCandidateTheRouterIsStillAskedAndItsDecisionLogged() {
        LayaRouter router = router("cpu");
        log.clear();
        assertEquals("code 0.83 cpu", router.route(RoutingInput.prompt("def f(): pass")).describe());
        assertEquals(List.of("laya: code 0.83 cpu"), log);
        assertEquals(1, classifier.states.size());
    }

    @Test
    void aStateOf1024BytesIsALongDocumentWithoutAskingTheClassifier() {
        LayaRouter router = router("cpu", "gpu");
        log.clear();
        String justUnder = "é".repeat(511) + "x";
        assertEquals(1023, justUnder.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        assertEquals("code", router.route(RoutingInput.prompt(justUnder)).requestClass());
        assertEquals(1, classifier.states.size());
        RouteDecision longDoc = router.route(RoutingInput.prompt(justUnder + "y"));
        assertEquals(new RouteDecision("long_doc", 1.0, "gpu"), longDoc);
        assertEquals(1, classifier.states.size(), "no model call for a long document");
        assertEquals("laya: long_doc 1.00 gpu", log.get(1));
    }

    @Test
    void aChatsStateIsEveryMessageJoinedByNewlines() {
        router("cpu").route(chat("system", "be brief", "user", "hi", "assistant", "hello", "user", "code?"));
        assertEquals(List.of("be brief\nhi\nhello\ncode?"), classifier.states);
    }

    @Test
    void aConversationIsDecidedOnceItsLaterTurnsAreNeitherScoredNorLogged() {
        LayaRouter router = router("cpu", "npu");
        log.clear();
        RouteDecision first = router.route(chat("system", "You write code.", "user", "Reverse a list in Python."));
        classifier.answer = new Classification(RequestClass.PROSE, 0.9);
        RouteDecision second = router.route(chat("system", "You write code.", "user", "Reverse a list in Python.",
                "assistant", "xs[::-1]", "user", "Now tell me a long story about it."));
        assertSame(first, second);
        assertEquals(1, classifier.states.size(), "the second turn is not scored again");
        assertEquals(List.of("laya: code 0.83 npu"), log, "nor logged again");
        assertEquals(1, router.conversations());

        RouteDecision other = router.route(chat("system", "You write code.", "user", "Tell me a story."));
        assertEquals("prose", other.requestClass(), "another opening is another conversation");
        assertEquals(2, classifier.states.size());
        assertEquals(2, log.size());
    }

    @Test
    void completionPromptsAreDecidedEachTime() {
        LayaRouter router = router("cpu", "npu");
        router.route(RoutingInput.prompt("same"));
        router.route(RoutingInput.prompt("same"));
        assertEquals(2, classifier.states.size());
        assertEquals(0, router.conversations());
    }

    @Test
    void theConversationCacheKeepsTheMostRecent4096() {
        LayaRouter router = router("cpu", "npu");
        for (int i = 0; i < LayaRouter.CACHE_ENTRIES; i++) {
            router.route(chat("user", "conversation " + i));
        }
        router.route(chat("user", "conversation 0"));
        assertEquals(LayaRouter.CACHE_ENTRIES, classifier.states.size(), "conversation 0 is still kept");
        router.route(chat("user", "one more"));
        assertEquals(LayaRouter.CACHE_ENTRIES, router.conversations());
        router.route(chat("user", "conversation 1"));
        assertEquals(LayaRouter.CACHE_ENTRIES + 2, classifier.states.size(),
                "the least recently used conversation (1) was dropped and is decided again");
        router.route(chat("user", "conversation 0"));
        assertEquals(LayaRouter.CACHE_ENTRIES + 2, classifier.states.size());
    }

    @Test
    void aScorerFailureFailsThatRequestOnlyAndKeepsNothing() {
        LayaRouter router = router("cpu", "npu");
        log.clear();
        classifier.fail = true;
        RouterException e = assertThrows(RouterException.class, () -> router.route(chat("user", "hello")));
        assertTrue(e.getMessage().contains("scorer failed"), e.getMessage());
        assertEquals(0, router.conversations());
        classifier.fail = false;
        assertEquals("code 0.83 npu", router.route(chat("user", "hello")).describe());
        assertEquals(List.of("laya: code 0.83 npu"), log);
    }

    @Test
    void needsACandidate() {
        assertThrows(IllegalArgumentException.class, this::router);
    }
}
